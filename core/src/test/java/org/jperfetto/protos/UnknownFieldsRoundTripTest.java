package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.util.List;
import org.jperfetto.protos.ProtoAssertions.UnknownField;
import org.junit.jupiter.api.Test;

/**
 * Fields a newer peer adds (numbers we do not declare) survive parse and re-serialization byte for
 * byte, at every depth, and survive editing a known field through a builder. The inputs are built
 * schema-free with CodedOutputStream, known fields first in number order and the future ones after,
 * which is exactly the order protobuf-java writes back.
 */
class UnknownFieldsRoundTripTest {
  /** A tiny schema-free writer for hand-built messages. */
  private static final class Wire {
    private final ByteString.Output out = ByteString.newOutput();
    private final CodedOutputStream coded = CodedOutputStream.newInstance(out);

    Wire varint(int number, long value) throws IOException {
      coded.writeUInt64(number, value);
      return this;
    }

    Wire fixed32(int number, int value) throws IOException {
      coded.writeFixed32(number, value);
      return this;
    }

    Wire fixed64(int number, long value) throws IOException {
      coded.writeFixed64(number, value);
      return this;
    }

    Wire bytes(int number, ByteString value) throws IOException {
      coded.writeBytes(number, value);
      return this;
    }

    Wire string(int number, String value) throws IOException {
      return bytes(number, ByteString.copyFromUtf8(value));
    }

    ByteString build() throws IOException {
      coded.flush();
      return out.toByteString();
    }
  }

  /** TrackEvent { debug_annotations { name_iid, int_value, future fixed32 }, ..., future fields } */
  private static ByteString packetWithFutureFields() throws IOException {
    ByteString annotation = new Wire()
        .varint(1, 3)            // name_iid
        .varint(4, 42)           // int_value
        .fixed32(4000, 0xCAFE)   // future
        .build();
    ByteString trackEvent = new Wire()
        .varint(3, 7)            // category_iids
        .bytes(4, annotation)    // debug_annotations
        .varint(9, 1)            // type = TYPE_SLICE_BEGIN
        .varint(10, 9)           // name_iid
        .varint(11, 1234)        // track_uuid
        .string(5000, "future string")
        .bytes(5001, new Wire().varint(1, 1).fixed64(2, -1L).build())
        .build();
    return new Wire()
        .varint(8, 1_000_000)    // timestamp
        .varint(10, 1)           // trusted_packet_sequence_id
        .bytes(11, trackEvent)   // track_event
        .varint(13, 2)           // sequence_flags
        .varint(3000, 77)        // future
        .build();
  }

  @Test
  void packetWithFutureFieldsAtThreeDepthsRoundTripsByteExact() throws Exception {
    ByteString bytes = packetWithFutureFields();
    TracePacket packet = TracePacket.parseFrom(bytes);

    assertEquals(1_000_000, packet.getTimestamp());
    assertEquals(42, packet.getTrackEvent().getDebugAnnotations(0).getIntValue());
    assertEquals(TrackEvent.Type.TYPE_SLICE_BEGIN, packet.getTrackEvent().getType());
    assertEquals(List.of(
            "TracePacket.track_event.debug_annotations[0]: #4000 in perfetto.protos.DebugAnnotation",
            "TracePacket.track_event: #5000 in perfetto.protos.TrackEvent",
            "TracePacket.track_event: #5001 in perfetto.protos.TrackEvent",
            "TracePacket: #3000 in perfetto.protos.TracePacket"),
        ProtoAssertions.unknownFields(packet).stream().map(UnknownField::toString).sorted().toList());

    assertEquals(bytes, packet.toByteString());
    assertEquals(bytes, Trace.parseFrom(new Wire().bytes(1, bytes).build()).getPacket(0).toByteString());
  }

  @Test
  void futureFieldsSurviveEditingAKnownField() throws Exception {
    TracePacket packet = TracePacket.parseFrom(packetWithFutureFields());
    TracePacket edited = packet.toBuilder()
        .setTimestamp(2_000_000)
        .setTrackEvent(packet.getTrackEvent().toBuilder().setTrackUuid(99))
        .build();
    assertEquals(ProtoAssertions.unknownFields(packet), ProtoAssertions.unknownFields(edited));
    TracePacket reparsed = TracePacket.parseFrom(edited.toByteString());
    assertEquals(99, reparsed.getTrackEvent().getTrackUuid());
    assertEquals(packet.getTrackEvent().getUnknownFields(), reparsed.getTrackEvent().getUnknownFields());
  }

  @Test
  void configFromANewerConsumerKeepsItsFutureFields() throws Exception {
    ByteString buffer = new Wire().varint(1, 4096).varint(4, 2).varint(900, 5).build();
    ByteString dsConfig = new Wire().string(1, "track_event").string(9000, "future option").build();
    ByteString dataSource = new Wire().bytes(1, dsConfig).build();
    ByteString config = new Wire()
        .bytes(1, buffer)
        .bytes(2, dataSource)
        .varint(3, 3000)
        .bytes(4096, new Wire().varint(1, 1).build())
        .build();
    ByteString request = new Wire().bytes(1, config).varint(77, 1).build();

    EnableTracingRequest parsed = EnableTracingRequest.parseFrom(request);
    assertEquals(4096, parsed.getTraceConfig().getBuffers(0).getSizeKb());
    assertEquals("track_event", parsed.getTraceConfig().getDataSources(0).getConfig().getName());
    assertEquals(4, ProtoAssertions.unknownFields(parsed).size(),
        () -> ProtoAssertions.unknownFields(parsed).toString());
    assertEquals(request, parsed.toByteString());
    // The service copies the consumer's config into the trace_config packet: the future fields go along.
    TracePacket packet = TracePacket.newBuilder().setTraceConfig(parsed.getTraceConfig()).build();
    assertEquals(config, TracePacket.parseFrom(packet.toByteString()).getTraceConfig().toByteString());
  }

  @Test
  void ipcFrameFromANewerPeerKeepsItsFutureFields() throws Exception {
    ByteString invoke = new Wire().varint(1, 1).varint(2, 4).bytes(3, ByteString.copyFrom(new byte[] {8, 1}))
        .varint(50, 1).build();
    ByteString frame = new Wire().varint(2, 9).bytes(5, invoke).string(100, "future").build();
    IPCFrame parsed = IPCFrame.parseFrom(frame);
    assertTrue(parsed.hasMsgInvokeMethod());
    assertEquals(4, parsed.getMsgInvokeMethod().getMethodId());
    assertEquals(2, ProtoAssertions.unknownFields(parsed).size());
    assertEquals(frame, parsed.toByteString());
  }
}
