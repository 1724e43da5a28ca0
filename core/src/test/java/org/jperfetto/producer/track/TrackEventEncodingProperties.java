package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.jperfetto.producer.LocalTraceWriters;
import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEventConfig;

/**
 * The contract of {@link TrackEventEncoder}: its faster forms (the short packets, the fixed-shape
 * packet) write, for every event they take, the very bytes the general encoding writes, interning
 * and the sequence's delta clock included, and its dispatch ({@link TrackEventEncoder#write}) does
 * too. Random sequences of events (types, tracks, categories and names from pools large enough for
 * iids past one byte, inline arguments of every kind, counters, timestamps that step, jump and go
 * back) go through three encoders, each on a sequence and a real TraceWriter of its own: the
 * general encoding alone, form by form, and the dispatch; the three writers' packets must match,
 * byte for byte but for the one difference {@link #minimalSizes} allows.
 */
class TrackEventEncodingProperties {
  private static final int SHORT = 0;
  private static final int FIXED = 1;
  private static final int GENERAL = 2;
  private static final long START = 1_000_000_000_000L;
  private static final java.util.HexFormat HEX = java.util.HexFormat.ofDelimiter(" ");

  private static final Category[] CATEGORIES = new Category[12];
  private static final String[] NAMES = new String[300];
  private static final String[] ARG_NAMES = new String[150];
  private static final Track[] SLICE_TRACKS = {Track.named("encoding_a"), Track.named("encoding_b", 7)};
  private static final Track[] COUNTER_TRACKS = {Track.counter("encoding_n"), Track.counter("encoding_m")};

  static {
    for (int i = 0; i < CATEGORIES.length; i++) {
      CATEGORIES[i] = Category.of("encoding.cat" + i);
    }
    for (int i = 0; i < NAMES.length; i++) {
      NAMES[i] = "event_" + i;
    }
    for (int i = 0; i < ARG_NAMES.length; i++) {
      ARG_NAMES[i] = "arg_" + i;
    }
  }

  /** One inline argument: its kind, value bits, and text for a string. */
  record Arg(String name, int kind, long bits, String text) {}

  /** One event, as TrackEvent stages it. */
  record Event(int type, Category category, Track track, String name, long timestamp, List<Arg> args,
      boolean hasCounter, boolean doubleCounter, long counterBits) {}

  @Property(tries = 100)
  void fasterFormsWriteTheGeneralEncodingsBytes(@ForAll long seed, @ForAll boolean incremental,
      @ForAll boolean filterDebugAnnotations) throws Exception {
    compare(events(new Random(seed)), incremental, filterDebugAnnotations);
  }

  /** The property checks something: every form takes a good share of the events it compares. */
  @Example
  void everyFormIsExercised() throws Exception {
    long[] forms = new long[3];
    for (int seed = 0; seed < 20; seed++) {
      long[] f = compare(events(new Random(seed)), seed % 4 != 0, seed % 5 == 0);
      for (int i = 0; i < 3; i++) {
        forms[i] += f[i];
      }
    }
    assertTrue(forms[SHORT] > 200 && forms[FIXED] > 500 && forms[GENERAL] > 500,
        "short, fixed-shape, general: " + java.util.Arrays.toString(forms));
  }

  /** The comparison forgives a padded size and nothing else. */
  @Example
  void minimalSizesForgivesOnlyAPaddedSize() {
    byte[] compact = {0x5a, 0x02, 0x08, 0x01, 0x68, 0x02};
    byte[] padded = {0x5a, (byte) 0x82, (byte) 0x80, (byte) 0x80, 0x00, 0x08, 0x01, 0x68, 0x02};
    byte[] otherType = {0x5a, 0x02, 0x08, 0x02, 0x68, 0x02};
    assertArrayEquals(compact, minimalSizes(padded));
    assertArrayEquals(compact, minimalSizes(compact));
    assertTrue(!java.util.Arrays.equals(minimalSizes(otherType), minimalSizes(padded)));
  }

  /** Writes events through the three encoders; asserts equal packets; returns how often each form wrote. */
  private static long[] compare(List<Event> events, boolean incremental, boolean filter) throws Exception {
    Session session = new Session(TrackEventConfig.newBuilder().setDisableIncrementalTimestamps(!incremental)
        .setFilterDebugAnnotations(filter).build());
    long[] forms = new long[3];
    try (LocalTraceWriters smb = new LocalTraceWriters(16, 8 << 20)) {
      Sequence general = new Sequence(smb, session);
      Sequence byForm = new Sequence(smb, session);
      Sequence dispatched = new Sequence(smb, session);
      for (Event e : events) {
        general.write(e, (enc, w, seq, t) -> {
          enc.writeEvent(w, seq, session, t, false);
          return GENERAL;
        });
        forms[byForm.write(e, (enc, w, seq, t) -> formByForm(enc, w, seq, session, e))]++;
        dispatched.write(e, (enc, w, seq, t) -> {
          enc.write(w, seq, session);
          return -1;
        });
      }
      List<byte[]> expected = general.packets(smb);
      assertEquals(events.size() + 1, expected.size());
      assertSamePackets(expected, byForm.packets(smb), "form by form", events);
      assertSamePackets(expected, dispatched.packets(smb), "dispatched", events);
    }
    return forms;
  }

  private static void assertSamePackets(List<byte[]> expected, List<byte[]> actual, String what, List<Event> events)
      throws Exception {
    assertEquals(expected.size(), actual.size(), what);
    for (int i = 0; i < expected.size(); i++) {
      String event = i == 0 ? "the first packet" : events.get(i - 1).toString();
      byte[] want = minimalSizes(expected.get(i));
      byte[] got = minimalSizes(actual.get(i));
      assertArrayEquals(want, got, () -> what + ", packet " + event + ": general " + HEX.formatHex(want)
          + ", this " + HEX.formatHex(got));
    }
    TracePacket.parseFrom(expected.get(expected.size() - 1)); // and they are protobuf
  }

  /**
   * The packet with the size of every nested message in its shortest varint. The one difference
   * the contract allows: a packet the general encoding split across two chunks keeps the 4-byte
   * size it reserved for a nested message (a redundant varint: the same message), where a faster
   * form, which never splits a packet, writes one byte.
   */
  static byte[] minimalSizes(byte[] packet) {
    byte[] fields = rewrite(packet, 0, packet.length);
    return fields != null ? fields : packet;
  }

  /**
   * The fields in b[from, to), nested ones rewritten the same way (a length-delimited field whose
   * bytes are not well-formed fields is a string and stays as it is); null if b[from, to) is not a
   * run of well-formed fields.
   */
  private static byte[] rewrite(byte[] b, int from, int to) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    int i = from;
    while (i < to) {
      long[] tag = varInt(b, i, to);
      if (tag == null || (tag[0] >>> 3) == 0) {
        return null;
      }
      putVarInt(out, tag[0]);
      i = (int) tag[1];
      int wireType = (int) (tag[0] & 7);
      if (wireType == 0) {
        long[] v = varInt(b, i, to);
        if (v == null) {
          return null;
        }
        putVarInt(out, v[0]);
        i = (int) v[1];
      } else if (wireType == 1 || wireType == 5) {
        int n = wireType == 1 ? 8 : 4;
        if (i + n > to) {
          return null;
        }
        out.write(b, i, n);
        i += n;
      } else if (wireType == 2) {
        long[] length = varInt(b, i, to);
        if (length == null || length[1] + length[0] > to) {
          return null;
        }
        int start = (int) length[1];
        int end = (int) (start + length[0]);
        byte[] nested = rewrite(b, start, end);
        byte[] body = nested != null ? nested : java.util.Arrays.copyOfRange(b, start, end);
        putVarInt(out, body.length);
        out.write(body, 0, body.length);
        i = end;
      } else {
        return null;
      }
    }
    return out.toByteArray();
  }

  /** The varint at b[i] and the index after it; null if it runs past to. */
  private static long[] varInt(byte[] b, int i, int to) {
    long value = 0;
    for (int shift = 0; i < to && shift < 64; shift += 7) {
      byte x = b[i++];
      value |= (long) (x & 0x7F) << shift;
      if (x >= 0) {
        return new long[] {value, i};
      }
    }
    return null;
  }

  private static void putVarInt(java.io.ByteArrayOutputStream out, long value) {
    while ((value & ~0x7FL) != 0) {
      out.write((int) (value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out.write((int) value);
  }

  /** The forms in the dispatch's order, each offered only the events the dispatch offers it. */
  private static int formByForm(TrackEventEncoder enc, TraceWriter w, SequenceState seq, Session session, Event e) {
    Track t = e.track();
    boolean slice = e.type() == TrackEventEncoder.TYPE_SLICE_BEGIN || e.type() == TrackEventEncoder.TYPE_SLICE_END;
    if (t == null && slice && !e.hasCounter() && enc.tryWriteShortSlice(w, seq, session)) {
      return SHORT;
    }
    if (t != null && e.type() == TrackEventEncoder.TYPE_COUNTER && enc.tryWriteShortCounter(w, seq, session, t)) {
      return SHORT;
    }
    if (enc.tryWriteFixedShape(w, seq, session, t)) {
      return FIXED;
    }
    enc.writeEvent(w, seq, session, t, false);
    return GENERAL;
  }

  /** How one of the three writes a staged event; returns the form it took. */
  interface Form {
    int write(TrackEventEncoder enc, TraceWriter writer, SequenceState seq, Track t);
  }

  /** An encoder, a sequence and its writer, the writer's first packet written. */
  private static final class Sequence {
    final TrackEventEncoder encoder = new TrackEventEncoder();
    final TraceWriter writer;
    final SequenceState seq = new SequenceState();

    Sequence(LocalTraceWriters smb, Session session) {
      writer = smb.newWriter();
      // The writer takes no small packet as a sequence's first: start it as ThreadState does.
      ProtoWriter p = writer.newTracePacket();
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, START);
      writer.finishTracePacket();
      seq.reset(writer, session, 0, START);
    }

    int write(Event e, Form form) {
      encoder.start(e.type(), e.category(), e.track(), e.name());
      for (Arg a : e.args()) {
        encoder.arg(a.name(), a.kind(), a.bits(), a.text());
      }
      if (e.hasCounter()) {
        encoder.counter(e.doubleCounter(), e.counterBits());
      }
      encoder.timestamp(e.timestamp());
      int taken = form.write(encoder, writer, seq, e.track());
      writer.finishTracePacket();
      encoder.clear();
      return taken;
    }

    List<byte[]> packets(LocalTraceWriters smb) {
      writer.flush();
      return smb.packetsOf(writer);
    }
  }

  // ---- random events ----

  static List<Event> events(Random r) {
    int count = 1 + r.nextInt(400);
    int names = 1 + r.nextInt(r.nextBoolean() ? 8 : NAMES.length);
    int argNames = 1 + r.nextInt(r.nextBoolean() ? 4 : ARG_NAMES.length);
    int categories = 1 + r.nextInt(CATEGORIES.length);
    List<Event> events = new ArrayList<>();
    long ts = START;
    for (int i = 0; i < count; i++) {
      ts += step(r);
      int pick = r.nextInt(10);
      Category c = CATEGORIES[r.nextInt(categories)];
      if (pick >= 8) {
        Track t = COUNTER_TRACKS[r.nextInt(COUNTER_TRACKS.length)];
        boolean isDouble = r.nextInt(4) == 0;
        long bits = isDouble ? Double.doubleToRawLongBits(r.nextGaussian() * 1e6) : value(r);
        events.add(new Event(TrackEventEncoder.TYPE_COUNTER, c, t, null, ts, List.of(), true, isDouble, bits));
        continue;
      }
      int type = pick < 4 ? TrackEventEncoder.TYPE_SLICE_BEGIN
          : pick < 6 ? TrackEventEncoder.TYPE_SLICE_END : TrackEventEncoder.TYPE_INSTANT;
      Track t = r.nextInt(5) == 0 ? SLICE_TRACKS[r.nextInt(SLICE_TRACKS.length)] : null;
      if (type == TrackEventEncoder.TYPE_SLICE_END) {
        events.add(new Event(type, c, t, null, ts, List.of(), false, false, 0));
        continue;
      }
      List<Arg> args = new ArrayList<>();
      int argCount = Math.max(0, r.nextInt(TrackEventEncoder.MAX_INLINE_ARGS + 2) - 1);
      for (int a = 0; a < argCount; a++) {
        args.add(arg(r, ARG_NAMES[r.nextInt(argNames)]));
      }
      events.add(new Event(type, c, t, NAMES[r.nextInt(names)], ts, args, false, false, 0));
    }
    return events;
  }

  /** Mostly small steps, some none, some long jumps, some back in time. */
  private static long step(Random r) {
    int pick = r.nextInt(20);
    if (pick < 13) {
      return r.nextInt(2_000);
    }
    return switch (pick) {
      case 13, 14 -> 0;
      case 15, 16 -> 1L << r.nextInt(48);
      case 17 -> r.nextLong(1L << 40, 1L << 57);
      default -> -r.nextInt(1_000_000);
    };
  }

  private static long value(Random r) {
    return switch (r.nextInt(6)) {
      case 0, 1, 2 -> r.nextInt(300);
      case 3 -> r.nextLong(1L << 62);
      case 4 -> -r.nextInt(1_000);
      default -> r.nextLong();
    };
  }

  private static Arg arg(Random r, String name) {
    return switch (r.nextInt(6)) {
      case 0, 1, 2 -> new Arg(name, TrackEventEncoder.ARG_LONG, value(r), null);
      case 3 -> new Arg(name, TrackEventEncoder.ARG_DOUBLE, Double.doubleToRawLongBits(r.nextDouble()), null);
      case 4 -> new Arg(name, TrackEventEncoder.ARG_BOOL, r.nextInt(2), null);
      default -> new Arg(name, TrackEventEncoder.ARG_STRING, 0, "text " + r.nextInt(5));
    };
  }
}
