package org.jperfetto.producer;

import static org.jperfetto.producer.FakeProducerHost.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.Fixtures;

/**
 * Our producer's first requests against what upstream v58's SDK producer sent traced in
 * test-fixtures/interop/v58producer_v58traced: the same methods in the same order and the same
 * InitializeConnection fields (values aside from the names).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProducerHandshakeInteropTest {
  @TempDir
  Path dir;

  /** The v58 producer's requests: (method name, args), resolving ids through the bind reply. */
  static List<Map.Entry<String, com.google.protobuf.ByteString>> upstreamCalls() throws Exception {
    Path folder = Fixtures.interop("v58producer_v58traced");
    List<IPCFrame> sent = frames(Files.readAllBytes(folder.resolve("producer.ipc.fd4.send.bin")));
    List<IPCFrame> received = frames(Files.readAllBytes(folder.resolve("producer.ipc.fd4.recv.bin")));
    IPCFrame.BindServiceReply bind = received.stream().filter(IPCFrame::hasMsgBindServiceReply)
        .findFirst().orElseThrow().getMsgBindServiceReply();
    List<Map.Entry<String, com.google.protobuf.ByteString>> calls = new ArrayList<>();
    for (IPCFrame f : sent) {
      if (f.hasMsgInvokeMethod()) {
        int id = f.getMsgInvokeMethod().getMethodId();
        String name = bind.getMethodsList().stream().filter(m -> m.getId() == id).findFirst()
            .orElseThrow().getName();
        calls.add(Map.entry(name, f.getMsgInvokeMethod().getArgsProto()));
      }
    }
    return calls;
  }

  static List<IPCFrame> frames(byte[] stream) throws Exception {
    ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    List<IPCFrame> out = new ArrayList<>();
    while (b.remaining() >= 4) {
      int len = b.getInt();
      byte[] frame = new byte[len];
      b.get(frame);
      out.add(IPCFrame.parseFrom(frame));
    }
    return out;
  }

  static Set<Integer> fieldsSet(com.google.protobuf.Message m) {
    Set<Integer> out = new TreeSet<>();
    for (Descriptors.FieldDescriptor f : m.getAllFields().keySet()) {
      out.add(f.getNumber());
    }
    return out;
  }

  @Test
  void handshakeMatchesUpstreamsSdk() throws Exception {
    List<Map.Entry<String, com.google.protobuf.ByteString>> theirs = upstreamCalls();
    String socket = dir.resolve("p.sock").toString();
    try (FakeProducerHost host = new FakeProducerHost(socket, false);
        TracingProducer producer = TracingProducer.builder("sdk_app_java").socketPath(socket)
            .dataSource(DataSource.named("track_event")).start()) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      await("registration", () -> host.calls.size() >= 3);
      List<String> ours = host.calls.stream().map(Map.Entry::getKey).limit(3).toList();
      List<String> expected = theirs.stream().map(Map.Entry::getKey).limit(3).toList();
      assertEquals(List.of("InitializeConnection", "GetAsyncCommand", "RegisterDataSource"), expected);
      assertEquals(expected, ours);
      InitializeConnectionRequest upstreamInit = InitializeConnectionRequest.parseFrom(theirs.get(0).getValue());
      InitializeConnectionRequest ourInit = InitializeConnectionRequest.parseFrom(host.calls.get(0).getValue());
      assertEquals(fieldsSet(upstreamInit), fieldsSet(ourInit));
      assertEquals(upstreamInit.getSmbScrapingMode(), ourInit.getSmbScrapingMode());
      assertEquals(upstreamInit.getSharedMemorySizeHintBytes(), ourInit.getSharedMemorySizeHintBytes());
      assertEquals(upstreamInit.getSharedMemoryPageSizeHintBytes(), ourInit.getSharedMemoryPageSizeHintBytes());
    }
  }
}
