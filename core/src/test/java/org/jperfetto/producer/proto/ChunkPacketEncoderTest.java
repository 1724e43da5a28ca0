package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;

class ChunkPacketEncoderTest {
  private static final byte UNTOUCHED = 0x55;

  /** A segment filled with UNTOUCHED, so stray stores show. */
  private static MemorySegment target(Arena arena, int size) {
    return arena.allocate(size).fill(UNTOUCHED);
  }

  private static byte[] bytes(MemorySegment s, long offset, int length) {
    return s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
  }

  /** The bytes after the message: zeros within the slack (the last long's tail), untouched beyond. */
  private static void assertOnlySlackTouched(MemorySegment s, long end) {
    for (long i = end; i < s.byteSize(); i++) {
      byte b = s.get(ValueLayout.JAVA_BYTE, i);
      if (i >= end + ChunkPacketEncoder.SLACK) {
        assertEquals(UNTOUCHED, b, "byte " + i + " past the slack was written");
      } else if (b != 0 && b != UNTOUCHED) {
        throw new AssertionError("slack byte " + i + " holds " + b);
      }
    }
  }

  @Test
  void encodesTheSameBytesAsProtobufJava() {
    for (long ts : new long[] {0, 1, 127, 128, 300, 16383, 16384, 1L << 35, (1L << 56) - 1, 1L << 56, -1,
        Long.MIN_VALUE}) {
      DebugAnnotation arg = DebugAnnotation.newBuilder().setNameIid(3).setIntValue(ts).build();
      TrackEvent event = TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN).setNameIid(2)
          .addDebugAnnotations(arg).setDoubleCounterValue(1.5).build();
      byte[] expected = TracePacket.newBuilder().setTimestamp(ts).setTrackEvent(event).setSequenceFlags(2)
          .build().toByteArray();
      try (Arena arena = Arena.ofConfined()) {
        for (int offset = 0; offset < 8; offset++) { // every alignment of the message in memory
          MemorySegment s = target(arena, 256);
          ChunkPacketEncoder e = new ChunkPacketEncoder().begin(s, offset);
          e.varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
          e.nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, event.getSerializedSize());
          // protobuf-java writes fields in number order: 4, 9, 10, 44
          e.nested(TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER, arg.getSerializedSize());
          e.varInt(DebugAnnotation.NAME_IID_FIELD_NUMBER, 3);
          e.varInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, ts);
          e.varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE);
          e.varInt(TrackEvent.NAME_IID_FIELD_NUMBER, 2);
          e.fixed64(TrackEvent.DOUBLE_COUNTER_VALUE_FIELD_NUMBER, Double.doubleToRawLongBits(1.5));
          e.varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, 2);
          assertEquals(expected.length, e.finish(), "ts=" + ts);
          assertArrayEquals(expected, bytes(s, offset, expected.length), "ts=" + ts + " offset=" + offset);
          for (int i = 0; i < offset; i++) {
            assertEquals(UNTOUCHED, s.get(ValueLayout.JAVA_BYTE, i), "byte before the message");
          }
          assertOnlySlackTouched(s, offset + expected.length);
        }
      }
    }
  }

  /** Random field sequences: every value width, every split of a field over two stored longs. */
  @Test
  void randomFieldSequencesMatchCodedOutputStream() throws IOException {
    Random random = new Random(42);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = target(arena, 512);
      ChunkPacketEncoder e = new ChunkPacketEncoder();
      for (int round = 0; round < 20_000; round++) {
        s.fill(UNTOUCHED);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CodedOutputStream expected = CodedOutputStream.newInstance(out);
        int offset = random.nextInt(8);
        e.begin(s, offset);
        int header = random.nextInt(128);
        e.rawByte(header);
        expected.writeRawByte((byte) header);
        int fields = random.nextInt(12);
        for (int f = 0; f < fields; f++) {
          int field = random.nextBoolean() ? 1 + random.nextInt(15) : 1 + random.nextInt(5000);
          long value = switch (random.nextInt(4)) {
            case 0 -> random.nextInt(128);
            case 1 -> random.nextInt(1 << 14);
            case 2 -> random.nextLong() >>> random.nextInt(64);
            default -> random.nextLong();
          };
          switch (random.nextInt(3)) {
            case 0 -> {
              e.varInt(field, value);
              expected.writeUInt64(field, value);
            }
            case 1 -> {
              e.fixed64(field, value);
              expected.writeFixed64(field, value);
            }
            default -> {
              int size = (int) (value & 0x3FFF);
              e.nested(field, size);
              expected.writeTag(field, 2);
              expected.writeUInt32NoTag(size);
            }
          }
        }
        expected.flush();
        byte[] want = out.toByteArray();
        assertEquals(want.length, e.finish(), "round " + round);
        assertArrayEquals(want, bytes(s, offset, want.length), "round " + round);
        assertOnlySlackTouched(s, offset + want.length);
      }
    }
  }

  @Test
  void takesUpToCapacityAndRefusesMoreWritingNothing() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = target(arena, 2 * ChunkPacketEncoder.CAPACITY);
      ChunkPacketEncoder e = new ChunkPacketEncoder().begin(s, 0);
      for (int i = 0; i < ChunkPacketEncoder.CAPACITY / 2; i++) {
        e.varInt(1, 1);
      }
      assertEquals(ChunkPacketEncoder.CAPACITY, e.finish());
      s.fill(UNTOUCHED);
      ChunkPacketEncoder over = e.begin(s, 0);
      for (int i = 0; i < ChunkPacketEncoder.CAPACITY; i++) {
        over.varInt(1, -1L); // 11 bytes each
      }
      assertThrows(IllegalStateException.class, over::finish);
      assertOnlySlackTouched(s, 0);
    }
  }
}
