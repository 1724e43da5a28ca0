package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;

class ScratchEncoderTest {
  private static byte[] message(ScratchEncoder e) {
    return Arrays.copyOfRange(e.buffer(), ScratchEncoder.OFFSET, ScratchEncoder.OFFSET + e.length());
  }

  @Test
  void encodesTheSameBytesAsProtobufJava() {
    for (long ts : new long[] {0, 1, 127, 128, 300, 1L << 35, (1L << 56) - 1, 1L << 56, -1, Long.MIN_VALUE}) {
      DebugAnnotation arg = DebugAnnotation.newBuilder().setNameIid(3).setIntValue(ts).build();
      TrackEvent event = TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN).setNameIid(2)
          .addDebugAnnotations(arg).setDoubleCounterValue(1.5).build();
      byte[] expected = TracePacket.newBuilder().setTimestamp(ts).setTrackEvent(event).setSequenceFlags(2)
          .build().toByteArray();
      ScratchEncoder e = new ScratchEncoder().clear();
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
      assertArrayEquals(expected, message(e), "ts=" + ts);
    }
  }

  @Test
  void refusesToGrowPastCapacity() {
    ScratchEncoder e = new ScratchEncoder();
    assertThrows(IllegalStateException.class, () -> {
      for (int i = 0; i < ScratchEncoder.CAPACITY; i++) {
        e.varInt(1, -1L);
      }
    });
  }
}
