package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.ProtoWire;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;

/** The two-long slice end packet is byte for byte what protobuf-java and the fixed-shape encoder write. */
class SliceEndPacketTest {
  @Test
  void everyTimestampSizeGivesTheSameBytesAsProtobufJava() {
    long[] deltas = {0, 1, 127, 128, 16_383, 16_384, (1L << 21) - 1, 1L << 21, (1L << 28) - 1, 1L << 28,
        (1L << 35) - 1, 1L << 35, (1L << 42) - 1, 1L << 42, (1L << 49) - 1, 1L << 49, (1L << 56) - 1};
    try (Arena arena = Arena.ofConfined()) {
      for (long delta : deltas) {
        byte[] packet = TracePacket.newBuilder().setTimestamp(delta)
            .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_END))
            .setSequenceFlags(TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE).build().toByteArray();
        int packetSize = ThreadState.SLICE_END_FIXED_BYTES + ProtoWire.varIntSize(delta);
        assertEquals(packet.length, packetSize, "size of delta " + delta);
        for (int offset = 0; offset < 8; offset++) {
          MemorySegment chunk = arena.allocate(64).fill((byte) 0x55);
          ThreadState.putSliceEnd(chunk, offset, packetSize, delta);
          assertEquals(packetSize, chunk.get(ValueLayout.JAVA_BYTE, offset), "size byte");
          assertArrayEquals(packet, chunk.asSlice(offset + 1, packetSize).toArray(ValueLayout.JAVA_BYTE),
              "delta " + delta + " at offset " + offset);
          for (long i = offset + 16; i < 64; i++) { // past the two stored longs: untouched
            assertEquals((byte) 0x55, chunk.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
          }
          // The fixed-shape encoder's bytes for the same event.
          MemorySegment other = arena.allocate(64);
          ChunkPacketEncoder e = new ChunkPacketEncoder().begin(other, 0).rawByte(packetSize)
              .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, delta)
              .nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, 2)
              .varInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_END_VALUE)
              .varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER,
                  TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE);
          assertEquals(packetSize + 1, e.finish());
          assertArrayEquals(other.asSlice(0, packetSize + 1).toArray(ValueLayout.JAVA_BYTE),
              chunk.asSlice(offset, packetSize + 1).toArray(ValueLayout.JAVA_BYTE));
        }
      }
    }
  }

  @Test
  void varIntBitsRefusesWhatDoesNotFitEightBytes() {
    assertThrows(IllegalArgumentException.class,
        () -> ChunkPacketEncoder.varIntBits(1L << 56));
    assertEquals(0x01_80L, ChunkPacketEncoder.varIntBits(128));
  }
}
