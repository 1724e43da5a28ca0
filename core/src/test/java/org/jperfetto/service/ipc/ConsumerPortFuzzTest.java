package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.ipc.InProcessCalls;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.os.PeerCredentials;
import org.jperfetto.protos.AttachRequest;
import org.jperfetto.protos.ChangeTraceConfigRequest;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DetachRequest;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.FlushRequest;
import org.jperfetto.protos.FreeBuffersRequest;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.ObserveEventsRequest;
import org.jperfetto.protos.QueryServiceStateRequest;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.ClockSource;
import org.jperfetto.service.SharedMemory;
import org.jperfetto.service.ManualTaskRunner;
import org.jperfetto.service.ServiceLimits;
import org.jperfetto.service.TracingService;

/**
 * Coverage-guided fuzzing of the ConsumerPort (docs/fuzzing.md): a few consumers of two uids
 * (root among them) call every method with garbage or with requests built from fuzzed fields
 * (out-of-range sizes, counts, ids and keys; floods of the same call), connect and disconnect,
 * and let time pass, against a service whose buffer memory is capped. Every request is handled
 * without an exception escaping (undecodable arguments fail the call, as the host does), a call
 * is answered at most once, the sessions stay within the service's limits and their buffers
 * within the cap, and once everyone has gone, nothing but detached sessions is left.
 */
class ConsumerPortFuzzTest {
  /** The buffer memory cap of the fuzzed service. */
  static final long CAP_BYTES = 1 << 20;
  private static final int MAX_OPS = 48;
  /** Time passing: past the flush, stop and trigger timeouts the fuzzed configs can set. */
  private static final long TIME_STEP_MS = 6_000;

  private static final class Harness {
    final ManualTaskRunner runner = new ManualTaskRunner();
    final TracingService service = new TracingService(runner, SharedMemory.arenaFactory(), ClockSource.jdk(), 1000);
    final ServiceDefinition port;
    final List<ClientInfo> clients = new ArrayList<>();
    final Set<String> keys = new HashSet<>();
    long lastClientId;
    long lastRequestId;

    Harness() {
      service.limitBufferMemory(CAP_BYTES);
      port = new ConsumerPortService(service).definition();
    }

    ClientInfo connect(int uid) {
      ClientInfo c = new ClientInfo(++lastClientId, new PeerCredentials(1, uid, uid));
      port.listener().onClientBound(c);
      runner.runUntilIdle();
      return c;
    }

    void disconnect(ClientInfo c) {
      port.listener().onClientDisconnected(c);
      runner.runUntilIdle();
    }

    /** Invokes as the host does: undecodable arguments fail the call; replies are collected. */
    List<IPCFrame> invoke(ClientInfo c, int methodId, ByteString args) {
      if (methodId == port.methodId("Detach")) {
        try {
          keys.add(DetachRequest.parseFrom(args).getKey()); // to attach and free it at the end
        } catch (InvalidProtocolBufferException e) {
          // the call fails the same way
        }
      }
      List<IPCFrame> replies = new ArrayList<>();
      MethodCall call = InProcessCalls.call(c, port, methodId, ++lastRequestId, args, replies::add);
      try {
        port.methods().get(methodId - 1).handler().handle(call);
      } catch (InvalidProtocolBufferException e) {
        if (!call.isDone()) {
          call.fail();
        }
      } catch (Exception e) {
        throw new AssertionError(port.methods().get(methodId - 1).name() + " threw", e);
      }
      runner.runUntilIdle();
      return replies;
    }

    List<IPCFrame> invoke(ClientInfo c, String method, MessageLite args) {
      return invoke(c, port.methodId(method), args.toByteString());
    }

    /** Every session, as root sees them. */
    List<TracingServiceState.TracingSession> sessions() throws InvalidProtocolBufferException {
      ClientInfo root = connect(0);
      List<TracingServiceState.TracingSession> out = new ArrayList<>();
      QueryServiceStateRequest query = QueryServiceStateRequest.newBuilder().setSessionsOnly(true).build();
      for (IPCFrame f : invoke(root, "QueryServiceState", query)) {
        assertTrue(f.getMsgInvokeMethodReply().getSuccess(), "QueryServiceState answers");
        out.addAll(QueryServiceStateResponse.parseFrom(f.getMsgInvokeMethodReply().getReplyProto())
            .getServiceState().getTracingSessionsList());
      }
      disconnect(root);
      return out;
    }
  }

  @FuzzTest
  void requests(FuzzedDataProvider data) throws Exception {
    Harness h = new Harness();
    int[] uids = {0, 1000, 1001};
    for (int i = 0, n = data.consumeInt(1, 3); i < n; i++) {
      h.clients.add(h.connect(uids[data.consumeInt(0, 2)]));
    }
    for (int op = 0; op < MAX_OPS && data.remainingBytes() > 0; op++) {
      ClientInfo c = h.clients.get(data.consumeInt(0, h.clients.size() - 1));
      switch (data.consumeInt(0, 5)) {
        case 0 -> h.invoke(c, data.consumeInt(1, ConsumerPortService.METHODS.size()),
            ByteString.copyFrom(data.consumeBytes(data.consumeInt(0, 64))));
        case 1, 2 -> {
          MessageLite req = request(data);
          int repeat = data.consumeBoolean() ? data.consumeInt(2, 40) : 1; // a flood of the same call
          String method = methodOf(req);
          for (int r = 0; r < repeat; r++) {
            h.invoke(c, method, req);
          }
        }
        case 3 -> {
          h.disconnect(c);
          h.clients.set(h.clients.indexOf(c), h.connect(uids[data.consumeInt(0, 2)]));
        }
        case 4 -> h.runner.advance(TIME_STEP_MS);
        default -> h.invoke(c, data.consumeInt(1, ConsumerPortService.METHODS.size()), ByteString.EMPTY);
      }
      checkLimits(h.sessions());
    }
    for (ClientInfo c : h.clients) {
      h.disconnect(c);
    }
    h.runner.advance(TIME_STEP_MS);
    // What is left is detached: attach it (any uid, any key tried) and free it.
    for (int uid : uids) {
      for (String key : h.keys) {
        ClientInfo c = h.connect(uid);
        List<IPCFrame> attached = h.invoke(c, "Attach", AttachRequest.newBuilder().setKey(key).build());
        if (attached.getFirst().getMsgInvokeMethodReply().getSuccess()) {
          h.invoke(c, "FreeBuffers", FreeBuffersRequest.getDefaultInstance());
        }
        h.disconnect(c);
      }
    }
    assertTrue(h.sessions().isEmpty(), "sessions left once every consumer went: " + h.sessions());
    assertTrue(h.service.sessionCount() == 0);
  }

  private static void checkLimits(List<TracingServiceState.TracingSession> sessions) {
    assertTrue(sessions.size() <= ServiceLimits.MAX_SESSIONS, sessions.size() + " sessions");
    long bytes = 0;
    for (TracingServiceState.TracingSession s : sessions) {
      for (int kb : s.getBufferSizeKbList()) {
        bytes += Integer.toUnsignedLong(kb) * 1024;
      }
    }
    assertTrue(bytes <= CAP_BYTES, "buffers of " + bytes + " bytes over the cap of " + CAP_BYTES);
  }

  private static String methodOf(MessageLite req) {
    String name = req.getClass().getSimpleName();
    return name.substring(0, name.length() - "Request".length());
  }

  /** A request of one of the methods that take fields, from fuzzed values. */
  private static MessageLite request(FuzzedDataProvider data) {
    return switch (data.consumeInt(0, 7)) {
      case 0 -> EnableTracingRequest.newBuilder().setTraceConfig(config(data)).build();
      case 1 -> ChangeTraceConfigRequest.newBuilder().setTraceConfig(config(data)).build();
      case 2 -> DetachRequest.newBuilder().setKey(data.consumeString(8)).build();
      case 3 -> AttachRequest.newBuilder().setKey(data.consumeString(8)).build();
      case 4 -> CloneSessionRequest.newBuilder().setSessionId(data.consumeLong(0, 20))
          .setUniqueSessionName(data.consumeBoolean() ? data.consumeString(4) : "").build();
      case 5 -> {
        ObserveEventsRequest.Builder b = ObserveEventsRequest.newBuilder();
        for (int i = 0, n = data.consumeInt(0, 4); i < n; i++) {
          var type = org.jperfetto.protos.ObservableEvents.Type.forNumber(data.consumeInt(0, 8));
          if (type != null) {
            b.addEventsToObserve(type);
          }
        }
        yield b.build();
      }
      case 6 -> FlushRequest.newBuilder().setTimeoutMs(data.consumeInt()).setFlags(data.consumeLong()).build();
      default -> QueryServiceStateRequest.newBuilder().setSessionsOnly(data.consumeBoolean()).build();
    };
  }

  @SuppressWarnings("deprecation") // compression_type: the older way a config asks for deflate
  private static TraceConfig config(FuzzedDataProvider data) {
    TraceConfig.Builder b = TraceConfig.newBuilder();
    int buffers = data.consumeBoolean() ? data.consumeInt(0, 130) : data.consumeInt(0, 3);
    for (int i = 0; i < buffers; i++) {
      var policy = TraceConfig.BufferConfig.FillPolicy.forNumber(data.consumeInt(0, 2));
      b.addBuffers(TraceConfig.BufferConfig.newBuilder()
          .setSizeKb(data.consumeBoolean() ? data.consumeInt() : 4 * data.consumeInt(0, 300))
          .setFillPolicy(policy != null ? policy : TraceConfig.BufferConfig.FillPolicy.UNSPECIFIED));
    }
    for (int i = 0, n = data.consumeInt(0, 2); i < n; i++) {
      b.addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
          .setName(data.consumeBoolean() ? SocketFixture.DS : data.consumeString(4))
          .setTargetBuffer(data.consumeInt(0, 200))));
    }
    if (data.consumeBoolean()) {
      b.setDurationMs(data.consumeInt(0, 100));
    }
    if (data.consumeBoolean()) {
      b.setDeferredStart(true);
    }
    if (data.consumeBoolean()) {
      b.setUniqueSessionName(data.consumeString(4));
    }
    if (data.consumeBoolean()) {
      b.setWriteIntoFile(true).setFileWritePeriodMs(data.consumeInt());
    }
    if (data.consumeBoolean()) {
      var compression = TraceConfig.CompressionType.forNumber(data.consumeInt(0, 1));
      b.setCompressionType(
          compression != null ? compression : TraceConfig.CompressionType.COMPRESSION_TYPE_UNSPECIFIED);
    }
    if (data.consumeBoolean()) {
      var mode = TraceConfig.TriggerConfig.TriggerMode.forNumber(data.consumeInt(0, 3));
      b.setTriggerConfig(TraceConfig.TriggerConfig.newBuilder()
          .setTriggerMode(mode != null ? mode : TraceConfig.TriggerConfig.TriggerMode.UNSPECIFIED)
          .setTriggerTimeoutMs(data.consumeInt(0, 1000))
          .addTriggers(TraceConfig.TriggerConfig.Trigger.newBuilder().setName(data.consumeString(4))));
    }
    return b.build();
  }
}
