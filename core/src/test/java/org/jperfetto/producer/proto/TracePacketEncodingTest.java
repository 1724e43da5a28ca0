package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.DebugAnnotationName;
import org.jperfetto.protos.EventName;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TracePackets written field by field with the generated field-number constants parse with the
 * generated protobuf-java classes to what a builder makes, and take no more bytes than protobuf-java
 * itself encodes them in.
 */
class TracePacketEncodingTest {

  private static void writeInternedData(ProtoWriter w) {
    w.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER,
        TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE);
    w.beginNested(TracePacket.INTERNED_DATA_FIELD_NUMBER);
    w.beginNested(InternedData.EVENT_NAMES_FIELD_NUMBER);
    w.appendVarInt(EventName.IID_FIELD_NUMBER, 1);
    w.appendString(EventName.NAME_FIELD_NUMBER, "ref_slice");
    w.endNested();
    w.beginNested(InternedData.DEBUG_ANNOTATION_NAMES_FIELD_NUMBER);
    w.appendVarInt(DebugAnnotationName.IID_FIELD_NUMBER, 1);
    w.appendString(DebugAnnotationName.NAME_FIELD_NUMBER, "i");
    w.endNested();
    w.endNested();
  }

  private static void writeSliceBegin(ProtoWriter w, long ts, long i) {
    w.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
    w.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
    w.appendVarInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE);
    w.appendVarInt(TrackEvent.NAME_IID_FIELD_NUMBER, 1);
    w.beginNested(TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER);
    w.appendVarInt(DebugAnnotation.NAME_IID_FIELD_NUMBER, 1);
    w.appendVarInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, i);
    w.endNested();
    w.endNested();
    w.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER,
        TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE);
  }

  private static void writeSliceEnd(ProtoWriter w, long ts) {
    w.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
    w.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
    w.appendVarInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_SLICE_END_VALUE);
    w.endNested();
    w.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER,
        TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE);
  }

  private static List<TracePacket> expected(int slices) {
    List<TracePacket> packets = new ArrayList<>();
    packets.add(TracePacket.newBuilder()
        .setSequenceFlags(TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE)
        .setInternedData(InternedData.newBuilder()
            .addEventNames(EventName.newBuilder().setIid(1).setName("ref_slice"))
            .addDebugAnnotationNames(DebugAnnotationName.newBuilder().setIid(1).setName("i")))
        .build());
    for (int i = 0; i < slices; i++) {
      long ts = 1_700_000_000_000_000_000L + 1000L * i;
      packets.add(TracePacket.newBuilder()
          .setTimestamp(ts)
          .setTrackEvent(TrackEvent.newBuilder()
              .setType(TrackEvent.Type.TYPE_SLICE_BEGIN)
              .setNameIid(1)
              .addDebugAnnotations(DebugAnnotation.newBuilder().setNameIid(1).setIntValue(i)))
          .setSequenceFlags(TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE)
          .build());
      packets.add(TracePacket.newBuilder()
          .setTimestamp(ts + 500)
          .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_END))
          .setSequenceFlags(TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE)
          .build());
    }
    return packets;
  }

  @ParameterizedTest
  @ValueSource(ints = {16, 40, 4080, 1 << 20})
  void slicesParseBackToTheSamePackets(int chunkPayload) throws InvalidProtocolBufferException {
    int slices = 300;
    FakeTraceWriter tw = new FakeTraceWriter(() -> chunkPayload);
    writeInternedData(tw.beginPacket());
    tw.endPacket();
    for (int i = 0; i < slices; i++) {
      long ts = 1_700_000_000_000_000_000L + 1000L * i;
      writeSliceBegin(tw.beginPacket(), ts, i);
      tw.endPacket();
      writeSliceEnd(tw.beginPacket(), ts + 500);
      tw.endPacket();
    }
    List<byte[]> out = tw.reassemble();
    List<TracePacket> expected = expected(slices);
    assertEquals(expected.size(), out.size());
    long ours = 0;
    long protobufs = 0;
    for (int i = 0; i < out.size(); i++) {
      assertEquals(expected.get(i), TracePacket.parseFrom(out.get(i)), "packet " + i);
      ours += out.get(i).length;
      protobufs += expected.get(i).getSerializedSize();
    }
    if (chunkPayload == 1 << 20) {
      // Nothing spans, every nested message is short: exactly protobuf's canonical size.
      assertEquals(protobufs, ours);
      assertTrue(tw.sent.isEmpty());
    } else {
      assertTrue(ours >= protobufs, "spanning messages keep 4-byte sizes");
    }
    if (chunkPayload >= 4080) {
      // Upstream's SDK takes about 53 bytes per slice in a trace (with its counters and interning).
      long withHeaders = tw.fragments.stream().mapToLong(f -> f.size() + f.headerBytes()).sum();
      double perSlice = withHeaders / (double) slices;
      assertTrue(perSlice < 45, "bytes per slice in the chunks: " + perSlice);
    } else {
      assertTrue(!tw.sent.isEmpty(), "small chunks should have needed patches");
    }
  }
}
