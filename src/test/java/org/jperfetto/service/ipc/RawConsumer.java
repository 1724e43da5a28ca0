package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.ipc.RawPeer;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.ReadBuffersResponse;

/**
 * A consumer that speaks ConsumerPort frame by frame and reads its socket only when told to: a
 * stuck, slow or hostile consumer for tests. Requests go out at once; replies wait in the socket
 * until {@link #next()}.
 */
final class RawConsumer implements AutoCloseable {
  private final RawPeer peer;
  private final Map<String, Integer> methodIds = new HashMap<>();
  private int serviceId;
  private long lastRequestId;

  private RawConsumer(RawPeer peer) {
    this.peer = peer;
  }

  /** Connects and binds ConsumerPort (reading the bind reply). */
  static RawConsumer connect(String socket) throws IOException {
    RawConsumer c = new RawConsumer(new RawPeer(socket));
    c.peer.send(IPCFrame.newBuilder().setRequestId(++c.lastRequestId)
        .setMsgBindService(IPCFrame.BindService.newBuilder().setServiceName(ConsumerPortService.SERVICE_NAME))
        .build());
    IPCFrame.BindServiceReply reply = c.next().getMsgBindServiceReply();
    c.serviceId = reply.getServiceId();
    for (IPCFrame.BindServiceReply.MethodInfo m : reply.getMethodsList()) {
      c.methodIds.put(m.getName(), m.getId());
    }
    return c;
  }

  /** Sends an InvokeMethod of method with args; returns its request id. */
  long invoke(String method, MessageLite args) throws IOException {
    return invokeRaw(methodIds.get(method), args.toByteString());
  }

  /** Sends an InvokeMethod by id with any bytes as args (out-of-range ids and garbage welcome). */
  long invokeRaw(int methodId, ByteString args) throws IOException {
    long id = ++lastRequestId;
    peer.send(IPCFrame.newBuilder().setRequestId(id).setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder()
        .setServiceId(serviceId).setMethodId(methodId).setArgsProto(args)).build());
    return id;
  }

  /** The next frame from the service; null once it closed the connection. */
  IPCFrame next() throws IOException {
    return peer.next();
  }

  /** The next reply to requestId, skipping others' replies; null on EOF. */
  IPCFrame.InvokeMethodReply replyTo(long requestId) throws IOException {
    for (IPCFrame f; (f = next()) != null; ) {
      if (f.getRequestId() == requestId) {
        return f.getMsgInvokeMethodReply();
      }
    }
    return null;
  }

  /**
   * Reads the ReadBuffers stream of requestId to its end, waiting pauseMs before each frame (a
   * slow reader), and glues the slices into packets.
   */
  List<byte[]> readPackets(long requestId, long pauseMs) throws IOException, InterruptedException {
    List<byte[]> packets = new java.util.ArrayList<>();
    ByteArrayOutputStream packet = new ByteArrayOutputStream();
    while (true) {
      if (pauseMs > 0) {
        Thread.sleep(pauseMs);
      }
      IPCFrame.InvokeMethodReply reply = replyTo(requestId);
      if (reply == null || !reply.getSuccess()) {
        throw new IOException("ReadBuffers ended without success: " + reply);
      }
      for (ReadBuffersResponse.Slice s : ReadBuffersResponse.parseFrom(reply.getReplyProto()).getSlicesList()) {
        s.getData().writeTo(packet);
        if (s.getLastSliceForPacket()) {
          packets.add(packet.toByteArray());
          packet.reset();
        }
      }
      if (!reply.getHasMore()) {
        return packets;
      }
    }
  }

  @Override
  public void close() {
    peer.close();
  }
}
