package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEventConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.Fixtures;

/**
 * The capture's producer (upstream's v58 SDK) ran TRACE_EVENT("ref", "ref_slice", "i", i) for
 * i = 0..299 with a counter "ref_counter" every 10th slice. We make the same calls and compare what
 * trace_processor would see: every event (type, categories, name, arguments, counter value, which
 * track) with interned ids resolved, the track descriptors' shape, and the sequence's first packet.
 * Also the bytes the events take.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TrackEventInteropTest {
  static final int SLICES = 300;

  @TempDir
  Path dir;

  static Path capture(String folder) {
    return Fixtures.interop(folder, "trace.pftrace");
  }

  /** The packets of the capture's TrackEvent sequence (the one whose first packet clears state). */
  static List<TracePacket> upstreamSequence(String folder) throws Exception {
    Trace trace = Trace.parseFrom(Files.readAllBytes(capture(folder)));
    int seq = -1;
    List<TracePacket> out = new ArrayList<>();
    for (TracePacket p : trace.getPacketList()) {
      if (seq < 0 && (p.getSequenceFlags() & 1) != 0) {
        seq = p.getTrustedPacketSequenceId();
      }
      if (seq >= 0 && p.getTrustedPacketSequenceId() == seq) {
        out.add(p);
      }
    }
    return out;
  }

  /** The same calls as the capture's producer. */
  static void replay(TrackEvent te, Category ref, Category refCounter, Track counter) {
    for (int i = 0; i < SLICES; i++) {
      te.begin(ref, "ref_slice", "i", i);
      if (i % 10 == 0) {
        te.counter(refCounter, counter, (long) i);
      }
      te.end(ref);
    }
  }

  /** Events as comparable strings: uuids replaced by what the track is. */
  static List<String> normalize(DecodedEvents d) {
    List<String> out = new ArrayList<>();
    for (DecodedEvents.Event e : d.events) {
      TrackDescriptor t = d.tracks.get(e.trackUuid());
      String track = t == null ? "unknown" : t.hasThread() ? "thread" : t.hasCounter() ? "counter:" + t.getStaticName()
          : "track:" + t.getStaticName();
      out.add(e.type() + " cats=" + e.categories() + " name=" + e.name() + " args=" + e.args() + " counter="
          + e.counter() + " on=" + track);
    }
    return out;
  }

  /** What each track descriptor is, parents resolved to kinds. */
  static List<String> trackShapes(DecodedEvents d) {
    List<String> out = new ArrayList<>();
    for (TrackDescriptor t : d.tracks.values()) {
      TrackDescriptor parent = d.tracks.get(t.getParentUuid());
      String kind = t.hasThread() ? "thread(pid,tid,name=" + t.getThread().hasThreadName() + ")"
          : t.hasProcess() ? "process(pid,name=" + t.getProcess().hasProcessName() + ")"
          : "counter=" + t.hasCounter() + " static_name=" + t.getStaticName();
      String parentKind = parent == null ? "none" : parent.hasProcess() ? "process" : "other";
      out.add(kind + " parent=" + parentKind);
    }
    out.sort(null);
    return out;
  }

  @Test
  void sameCallsDecodeToTheSameTrackEventsAsUpstreamV58() throws Exception {
    List<TracePacket> upstream = upstreamSequence("v58producer_v58traced");
    DecodedEvents theirs = new DecodedEvents();
    upstream.forEach(p -> theirs.add(1, p));
    assertEquals(List.of(), theirs.errors);
    assertEquals(SLICES * 2 + SLICES / 10, theirs.events.size(), "the capture as the README describes it");

    Category ref = Category.of("ref");
    Category refCounter = Category.of("ref.counter");
    Track counter = Track.counter("ref_counter");
    try (TrackEventFixture f = new TrackEventFixture(dir, ref, refCounter)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      replay(f.trackEvent, ref, refCounter, counter);
      DecodedEvents ours = f.finish();
      assertEquals(List.of(), ours.errors);
      List<String> ourEvents = normalize(ours);
      ourEvents.removeIf(s -> s.contains(TrackEventFixture.DONE));
      assertEquals(normalize(theirs), ourEvents);
      assertEquals(trackShapes(theirs), trackShapes(ours));

      TracePacket ourFirst = f.host.packets().get(0).packet();
      TracePacket theirFirst = upstream.get(0);
      assertEquals(theirFirst.getSequenceFlags(), ourFirst.getSequenceFlags());
      assertEquals(theirFirst.getTracePacketDefaults().getTimestampClockId(),
          ourFirst.getTracePacketDefaults().getTimestampClockId());
      assertTrue(ourFirst.getTracePacketDefaults().getTrackEventDefaults().hasTrackUuid());
      assertEquals(theirFirst.getClockSnapshot().getClocks(1).toBuilder().clearTimestamp().build(),
          ourFirst.getClockSnapshot().getClocks(1).toBuilder().clearTimestamp().build(),
          "the incremental clock is declared the same way");
      assertEquals(flagsAfterFirst(upstream), flagsAfterFirst(f.host.packets().stream().map(p -> p.packet()).toList()));
    }
  }

  private static Map<Integer, Integer> flagsAfterFirst(List<TracePacket> packets) {
    Map<Integer, Integer> counts = new HashMap<>();
    for (TracePacket p : packets.subList(1, packets.size())) {
      counts.merge(p.getSequenceFlags(), 1, Integer::sum);
    }
    counts.replaceAll((k, v) -> 1); // which flags appear, not how often
    return counts;
  }

  /** Bytes the producer wrote for a packet (what the service adds, trusted_*, left out). */
  static int producerBytes(TracePacket p) {
    int size = p.toBuilder().clearTrustedUid().clearTrustedPid().clearTrustedPacketSequenceId().build()
        .getSerializedSize();
    return size + 1 + varintSize(size); // + its framing as Trace.packet (tag, length)
  }

  /**
   * Bytes a packet's delta timestamp takes beyond 2 (negative for a 1-byte delta). A delta's size
   * depends only on how fast the thread ran: under 128 ns it takes 1 byte, up to 16 us 2 bytes, past
   * that 3 or more (a cold, loaded or stalled JVM). Upstream's figure comes from its SDK at full
   * speed, where deltas take 2 bytes; size budgets count every delta at exactly 2 bytes, so they
   * measure the encoding and not the machine's load.
   */
  static int slowTimestampBytes(TracePacket p) {
    if (!p.hasTimestamp() || p.hasTimestampClockId()) {
      return 0;
    }
    return varintSize(p.getTimestamp()) - 2;
  }

  /** Bytes upstream traced v58 added to each packet of the capture (trusted_uid, _pid, _sequence_id). */
  static double upstreamTrustedBytesPerPacket() throws Exception {
    return upstreamSequence("v58producer_v58traced").stream().mapToInt(p -> p.getSerializedSize()
        - p.toBuilder().clearTrustedUid().clearTrustedPid().clearTrustedPacketSequenceId().build().getSerializedSize())
        .average().orElseThrow();
  }

  static int varintSize(long v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  /**
   * Bytes per slice of the event packets (slices, counters, their interned data and the counter
   * track descriptor), leaving out the sequence's opening packets whose size depends on the
   * process (command line, names) rather than on the events.
   */
  static double eventBytesPerSlice(List<TracePacket> packets) {
    return packets.stream().filter(p -> !p.hasTracePacketDefaults() && !p.getTrackDescriptor().hasThread()
        && !p.getTrackDescriptor().hasProcess() && !isMarker(p)).mapToInt(TrackEventInteropTest::producerBytes)
        .sum() / (double) SLICES;
  }

  @Test
  void theSameEventsTakeNoMoreBytesThanUpstreamV58() throws Exception {
    List<TracePacket> upstream = upstreamSequence("v58producer_v58traced");
    double theirs = eventBytesPerSlice(upstream);
    Category ref = Category.of("ref");
    Category refCounter = Category.of("ref.counter");
    Track counter = Track.counter("ref_counter");
    try (TrackEventFixture f = new TrackEventFixture(dir, ref, refCounter)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      replay(f.trackEvent, ref, refCounter, counter);
      f.finish();
      List<TracePacket> packets = f.host.packets().stream().map(p -> p.packet()).toList();
      double ours = eventBytesPerSlice(packets);
      System.out.printf("bytes per slice (300 slices, counter every 10th; event packets with trace framing, no"
          + " trusted fields): ours %.2f, upstream v58 %.2f; whole sequence: ours %.2f, upstream %.2f%n", ours, theirs,
          packets.stream().mapToInt(TrackEventInteropTest::producerBytes).sum() / (double) SLICES,
          upstream.stream().mapToInt(TrackEventInteropTest::producerBytes).sum() / (double) SLICES);
      // Timestamp deltas depend on speed (a cold JVM is slower): allow half a byte per slice.
      assertTrue(ours <= theirs + 0.5, "ours " + ours + " > upstream " + theirs);
    }
  }

  static boolean isMarker(TracePacket p) {
    return p.getInternedData().getEventNamesList().stream()
        .anyMatch(n -> n.getName().startsWith(TrackEventFixture.DONE))
        || (p.hasTrackEvent() && p.getTrackEvent().getCategoryIidsCount() > 0 && !p.hasInternedData()
            && p.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_INSTANT);
  }
}
