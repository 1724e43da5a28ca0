package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;

/**
 * The short packets' layouts ({@link TrackEventEncoder#encodeSliceEnd} and the others, assembled in
 * a ShortPacket) are byte for byte the fields the fixed-shape encoding writes, and parse as the
 * events they stand for, for every timestamp size and at every alignment; nothing past their stored
 * longs is touched. TrackEventEncodingProperties checks the same contract one level up, through
 * real writers, against the general encoding.
 */
class ShortSlicePacketTest {
  private static final byte UNTOUCHED = 0x55;
  private static final long[] DELTAS = {0, 1, 127, 128, 16_383, 16_384, (1L << 21) - 1, 1L << 21, (1L << 28) - 1,
      1L << 28, (1L << 35) - 1, 1L << 35, (1L << 42) - 1, 1L << 42, (1L << 49) - 1, 1L << 49, (1L << 56) - 1};
  private static final int FLAGS = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** Stores the packet at offset into a fresh chunk; returns the chunk. */
  private static MemorySegment stored(Arena arena, ShortPacket packet, int offset, int length) {
    MemorySegment chunk = arena.allocate(64).fill(UNTOUCHED);
    packet.store(chunk, offset, length);
    int stores = (length + 7) / 8;
    for (long i = offset + 8L * stores; i < 64; i++) {
      assertEquals(UNTOUCHED, chunk.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " past the stores");
    }
    return chunk;
  }

  /**
   * One packet for every case, as a thread's state reuses its own, and all ones to begin with: no
   * byte of the packet before (a longer one, say) may show through the next.
   */
  private final ShortPacket reused = allOnes(new ShortPacket());

  private static ShortPacket allOnes(ShortPacket p) {
    for (int pos = 0; pos <= ShortPacket.MAX_BYTES; pos += Long.BYTES) {
      p.put(-1L, Long.BYTES, pos);
    }
    return p;
  }

  private static TracePacket storedAsFixed(Arena arena, ShortPacket packet, int offset, MemorySegment fixed,
      int packetSize, long delta, String what) throws InvalidProtocolBufferException {
    MemorySegment chunk = stored(arena, packet, offset, packetSize + 1);
    assertArrayEquals(bytes(fixed, 0, packetSize + 1), bytes(chunk, offset, packetSize + 1), what);
    TracePacket parsed = TracePacket.parseFrom(bytes(chunk, offset + 1, packetSize));
    assertEquals(delta, parsed.getTimestamp(), what);
    assertEquals(FLAGS, parsed.getSequenceFlags(), what);
    return parsed;
  }

  private static byte[] bytes(MemorySegment s, long offset, int length) {
    return s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
  }

  @Test
  void sliceEndsAreTheFixedShapeBytesAndProtobufJavasForEveryTimestampSize() throws Exception {
    try (Arena arena = Arena.ofConfined()) {
      for (long delta : DELTAS) {
        int packetSize = TrackEventEncoder.SLICE_END_FIXED_BYTES + Varints.size(delta);
        byte[] expected = TracePacket.newBuilder().setTimestamp(delta)
            .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_END))
            .setSequenceFlags(FLAGS).build().toByteArray();
        assertEquals(expected.length, packetSize);
        MemorySegment fixed = arena.allocate(64);
        assertEquals(packetSize + 1, new ChunkPacketEncoder().begin(fixed, 0).rawByte(packetSize)
            .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, delta).nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, 2)
            .varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_END_VALUE)
            .varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, FLAGS).finish());
        for (int offset = 0; offset < 8; offset++) {
          ShortPacket p = reused;
          TrackEventEncoder.encodeSliceEnd(p, packetSize, delta);
          MemorySegment chunk = stored(arena, p, offset, packetSize + 1);
          assertArrayEquals(bytes(fixed, 0, packetSize + 1), bytes(chunk, offset, packetSize + 1), "delta " + delta);
          assertArrayEquals(expected, bytes(chunk, offset + 1, packetSize), "delta " + delta);
        }
      }
    }
  }

  @Test
  void sliceBeginsAreTheFixedShapeBytesAndParseAsTheEvent() throws InvalidProtocolBufferException {
    try (Arena arena = Arena.ofConfined()) {
      for (long delta : DELTAS) {
        for (int[] iids : new int[][] {{1, 1}, {1, 127}, {127, 1}, {64, 99}}) {
          int packetSize = TrackEventEncoder.SLICE_BEGIN_FIXED_BYTES + Varints.size(delta);
          MemorySegment fixed = arena.allocate(64);
          // The fixed-shape path's field order: type, category_iids, name_iid.
          assertEquals(packetSize + 1, new ChunkPacketEncoder().begin(fixed, 0).rawByte(packetSize)
              .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, delta).nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, 6)
              .varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE)
              .varInt(TrackEvent.CATEGORY_IIDS_FIELD_NUMBER, iids[0])
              .varInt(TrackEvent.NAME_IID_FIELD_NUMBER, iids[1])
              .varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, FLAGS).finish());
          for (int offset = 0; offset < 8; offset++) {
            ShortPacket p = reused;
            TrackEventEncoder.encodeSliceBegin(p, packetSize, delta, iids[0], iids[1]);
            MemorySegment chunk = stored(arena, p, offset, packetSize + 1);
            assertArrayEquals(bytes(fixed, 0, packetSize + 1), bytes(chunk, offset, packetSize + 1),
                "delta " + delta + " iids " + iids[0] + "," + iids[1]);
            TracePacket parsed = TracePacket.parseFrom(bytes(chunk, offset + 1, packetSize));
            assertEquals(delta, parsed.getTimestamp());
            assertEquals(FLAGS, parsed.getSequenceFlags());
            assertEquals(TrackEvent.Type.TYPE_SLICE_BEGIN, parsed.getTrackEvent().getType());
            assertEquals(iids[0], parsed.getTrackEvent().getCategoryIids(0));
            assertEquals(iids[1], parsed.getTrackEvent().getNameIid());
          }
        }
      }
    }
  }

  @Test
  void sliceBeginsWithAnIntAreTheFixedShapeBytesAndParseAsTheEvent() throws InvalidProtocolBufferException {
    long[] values = {0, 1, 127, 128, 16_383, 16_384, (1L << 21) - 1, 1L << 21, (1L << 28) - 1, 1L << 28,
        (1L << 35) - 1, 1L << 35, (1L << 42) - 1};
    int checked = 0;
    try (Arena arena = Arena.ofConfined()) {
      for (long delta : DELTAS) {
        for (long value : values) {
          int n = Varints.size(delta);
          int m = Varints.size(value);
          if (TrackEventEncoder.SLICE_BEGIN_INT_FIXED_BYTES + n + m + 1 > TrackEventEncoder.SHORT_SLICE_MAX_BYTES) {
            continue; // the fixed-shape path's packet
          }
          for (int[] iids : new int[][] {{1, 1, 1}, {1, 127, 5}, {127, 1, 127}, {64, 99, 3}}) {
            int packetSize = TrackEventEncoder.SLICE_BEGIN_INT_FIXED_BYTES + n + m;
            int annotation = 3 + m;
            MemorySegment fixed = arena.allocate(64);
            assertEquals(packetSize + 1, new ChunkPacketEncoder().begin(fixed, 0).rawByte(packetSize)
                .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, delta)
                .nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, 6 + 2 + annotation)
                .varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE)
                .varInt(TrackEvent.CATEGORY_IIDS_FIELD_NUMBER, iids[0])
                .varInt(TrackEvent.NAME_IID_FIELD_NUMBER, iids[1])
                .nested(TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER, annotation)
                .varInt(DebugAnnotation.NAME_IID_FIELD_NUMBER, iids[2])
                .varInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, value)
                .varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, FLAGS).finish());
            for (int offset = 0; offset < 8; offset++) {
              ShortPacket p = reused;
              TrackEventEncoder.encodeSliceBeginWithInt(p, packetSize, delta, iids[0], iids[1], iids[2], value);
              String what = "delta " + delta + " value " + value + " iids " + java.util.Arrays.toString(iids);
              TrackEvent event = storedAsFixed(arena, p, offset, fixed, packetSize, delta, what).getTrackEvent();
              assertEquals(TrackEvent.Type.TYPE_SLICE_BEGIN, event.getType(), what);
              assertEquals(iids[0], event.getCategoryIids(0), what);
              assertEquals(iids[1], event.getNameIid(), what);
              assertEquals(iids[2], event.getDebugAnnotations(0).getNameIid(), what);
              assertEquals(value, event.getDebugAnnotations(0).getIntValue(), what);
              checked++;
            }
          }
        }
      }
    }
    assertTrue(checked > 500, "combinations checked: " + checked);
  }

  @Test
  void integerCountersAreTheFixedShapeBytesAndParseAsTheEvent() throws InvalidProtocolBufferException {
    long[] values = {0, 1, 127, 128, 16_383, 16_384, (1L << 21) - 1, 1L << 21, (1L << 35) - 1, 1L << 35,
        (1L << 56) - 1};
    // uuids of every varint size from 1 to 10 bytes, the last ones as hashed track uuids are
    long[] uuids = {1, 300, 1L << 20, 1L << 27, 1L << 34, 1L << 41, 1L << 48, 1L << 55, 1L << 62, -1L,
        0x9E37_79B9_7F4A_7C15L};
    int checked = 0;
    try (Arena arena = Arena.ofConfined()) {
      for (long delta : DELTAS) {
        for (long value : values) {
          for (long uuid : uuids) {
            int n = Varints.size(delta);
            int m = Varints.size(value);
            int u = Varints.size(uuid);
            int packetSize = TrackEventEncoder.COUNTER_FIXED_BYTES + n + u + m;
            if (packetSize + 1 > ShortPacket.MAX_BYTES) {
              continue; // the fixed-shape path's packet
            }
            int event = 2 + 1 + u + 2 + m;
            MemorySegment fixed = arena.allocate(64);
            assertEquals(packetSize + 1, new ChunkPacketEncoder().begin(fixed, 0).rawByte(packetSize)
                .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, delta)
                .nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, event)
                .varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_COUNTER_VALUE)
                .varInt(TrackEvent.TRACK_UUID_FIELD_NUMBER, uuid)
                .varInt(TrackEvent.COUNTER_VALUE_FIELD_NUMBER, value)
                .varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, FLAGS).finish());
            for (int offset = 0; offset < 8; offset++) {
              ShortPacket p = reused;
              TrackEventEncoder.encodeCounter(p, packetSize, delta, u, ChunkPacketEncoder.varIntLowBits(uuid),
                  ChunkPacketEncoder.varIntHighBits(uuid), value);
              String what = "delta " + delta + " value " + value + " uuid " + Long.toUnsignedString(uuid);
              TrackEvent e = storedAsFixed(arena, p, offset, fixed, packetSize, delta, what).getTrackEvent();
              assertEquals(TrackEvent.Type.TYPE_COUNTER, e.getType(), what);
              assertEquals(uuid, e.getTrackUuid(), what);
              assertEquals(value, e.getCounterValue(), what);
              assertEquals(0, e.getCategoryIidsCount(), what);
              checked++;
            }
          }
        }
      }
    }
    // every uuid size, and packets that need the fourth long
    assertTrue(checked > 1000, "combinations checked: " + checked);
  }

  @Test
  void varIntHalvesAreTheEncodersBytes() {
    try (Arena arena = Arena.ofConfined()) {
      for (long v : new long[] {0, 1, 127, 128, (1L << 56) - 1, 1L << 56, 1L << 62, Long.MAX_VALUE, -1L,
          Long.MIN_VALUE}) {
        MemorySegment s = arena.allocate(32).fill((byte) 0);
        int size = Varints.size(v);
        assertEquals(size, new ChunkPacketEncoder().begin(s, 0).varInt(1, v).finish() - 1);
        long low = s.get(LONG_LE, 1) & (size >= 8 ? -1L : (1L << (8 * size)) - 1);
        assertEquals(low, ChunkPacketEncoder.varIntLowBits(v), "low " + v);
        long high = size > 8 ? s.get(LONG_LE, 9) & (size == 9 ? 0xFF : 0xFFFF) : 0;
        assertEquals(high, ChunkPacketEncoder.varIntHighBits(v), "high " + v);
      }
    }
  }

  @Test
  void varIntBitsRefusesWhatDoesNotFitEightBytes() {
    assertThrows(IllegalArgumentException.class, () -> ChunkPacketEncoder.varIntBits(1L << 56));
    assertEquals(0x01_80L, ChunkPacketEncoder.varIntBits(128));
  }
}
