package org.jperfetto.service;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;

/** A consumer that keeps what the service tells it and decodes the trace with protobuf-java. */
final class TestConsumer implements ConsumerCallbacks {
  final List<String> disabled = new ArrayList<>();
  final List<ReadBuffersResponse.Slice> slices = new ArrayList<>();
  final List<Boolean> batches = new ArrayList<>();
  final List<org.jperfetto.protos.ObservableEvents> events = new ArrayList<>();
  /** onSessionCloned outcomes: "" on success, else the error. */
  final List<String> clones = new ArrayList<>();
  ConsumerEndpoint endpoint;

  TestConsumer connect(TracingService service, int uid) {
    endpoint = service.connectConsumer(this, uid);
    return this;
  }

  String enable(TraceConfig config) {
    return endpoint.enableTracing(config, java.util.Optional.empty());
  }

  @Override
  public void onTracingDisabled(String error) {
    disabled.add(error);
  }

  @Override
  public void onTraceData(List<ReadBuffersResponse.Slice> s, boolean hasMore) {
    slices.addAll(s);
    batches.add(hasMore);
  }

  @Override
  public void onObservableEvents(org.jperfetto.protos.ObservableEvents e) {
    events.add(e);
  }

  @Override
  public void onSessionCloned(boolean success, String error, long uuidMsb, long uuidLsb) {
    clones.add(success ? "" : error);
  }

  /** Reads the buffers and decodes everything read so far as a Trace (slices glued per packet). */
  Trace readTrace() throws IOException {
    endpoint.readBuffers();
    return trace();
  }

  /** Every packet read so far, its slices glued. */
  List<byte[]> packets() {
    List<byte[]> out = new ArrayList<>();
    ByteString packet = ByteString.EMPTY;
    for (ReadBuffersResponse.Slice s : slices) {
      packet = packet.concat(s.getData());
      if (s.getLastSliceForPacket()) {
        out.add(packet.toByteArray());
        packet = ByteString.EMPTY;
      }
    }
    return out;
  }

  Trace trace() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream cos = CodedOutputStream.newInstance(out);
    ByteString packet = ByteString.EMPTY;
    for (ReadBuffersResponse.Slice s : slices) {
      if (s.getData().size() > ServiceLimits.MAX_SLICE_SIZE) {
        throw new AssertionError("slice over the limit: " + s.getData().size());
      }
      packet = packet.concat(s.getData());
      if (s.getLastSliceForPacket()) {
        cos.writeBytes(1, packet);
        packet = ByteString.EMPTY;
      }
    }
    if (!packet.isEmpty()) {
      throw new AssertionError("trace ends inside a packet");
    }
    cos.flush();
    return Trace.parseFrom(out.toByteArray());
  }
}
