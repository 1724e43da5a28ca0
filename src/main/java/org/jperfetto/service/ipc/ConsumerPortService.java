package org.jperfetto.service.ipc;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.MethodHandler;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.ipc.ServiceListener;
import org.jperfetto.protos.ConsumerPortOuterClass;
import org.jperfetto.protos.DisableTracingResponse;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.EnableTracingResponse;
import org.jperfetto.protos.FlushRequest;
import org.jperfetto.protos.FlushResponse;
import org.jperfetto.protos.FreeBuffersResponse;
import org.jperfetto.protos.GetTraceStatsResponse;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.StartTracingResponse;
import org.jperfetto.service.ConsumerCallbacks;
import org.jperfetto.service.ConsumerEndpoint;
import org.jperfetto.service.TracingService;

/**
 * ConsumerPort on a socket: each client that binds it becomes one {@link ConsumerEndpoint}.
 * As upstream: EnableTracing is answered only when the session ends (disabled=true and the error,
 * if any); ReadBuffers answers with a stream of ReadBuffersResponse; Flush succeeds or fails as
 * the service reports. The methods of the session-management issue (Detach, Attach,
 * ObserveEvents, QueryServiceState, QueryCapabilities, SaveTraceForBugreport, CloneSession,
 * ChangeTraceConfig) are still listed, so their ids stay stable, and answer a failed reply: add a
 * handler to {@link #handlers} to serve one.
 */
public final class ConsumerPortService {
  private static final System.Logger LOG = System.getLogger(ConsumerPortService.class.getName());
  public static final String SERVICE_NAME = "ConsumerPort";
  /**
   * Budget for one ReadBuffersResponse frame: the 128 KiB frame cap minus room for the IPCFrame
   * and length prefix. A maximal slice (130560 bytes) plus its tags fits.
   */
  static final int MAX_READ_REPLY_BYTES = 128 * 1024 - 160;

  private final TracingService service;
  private final Map<Long, RemoteConsumer> consumers = new ConcurrentHashMap<>();
  private final ServiceDefinition definition;

  public ConsumerPortService(TracingService service) {
    this.service = service;
    definition = ServiceDefinition.fromDescriptor(
        ConsumerPortOuterClass.getDescriptor().findServiceByName(SERVICE_NAME), handlers(),
        new ServiceListener() {
          @Override
          public void onClientBound(ClientInfo client) {
            RemoteConsumer c = new RemoteConsumer();
            consumers.put(client.clientId(), c);
            service.taskRunner().post(() -> c.endpoint = service.connectConsumer(c, client.uid()));
          }

          @Override
          public void onClientDisconnected(ClientInfo client) {
            RemoteConsumer c = consumers.remove(client.clientId());
            if (c != null) {
              service.taskRunner().post(c::disconnect);
            }
          }
        });
  }

  public ServiceDefinition definition() {
    return definition;
  }

  private Map<String, MethodHandler> handlers() {
    Map<String, MethodHandler> h = new HashMap<>();
    h.put("EnableTracing", this::enableTracing);
    h.put("StartTracing", call -> onConsumer(call, (c, ep) -> {
      ep.startTracing();
      call.reply(StartTracingResponse.getDefaultInstance());
    }));
    h.put("DisableTracing", call -> onConsumer(call, (c, ep) -> {
      ep.disableTracing();
      call.reply(DisableTracingResponse.getDefaultInstance());
    }));
    h.put("ReadBuffers", call -> onConsumer(call, (c, ep) -> {
      if (c.readCall != null && !c.readCall.isDone()) {
        c.readCall.fail(); // a newer read replaces an unfinished one
      }
      c.readCall = call;
      ep.readBuffers();
    }));
    h.put("FreeBuffers", call -> onConsumer(call, (c, ep) -> {
      ep.freeBuffers();
      c.closeFileSink();
      call.reply(FreeBuffersResponse.getDefaultInstance());
    }));
    h.put("Flush", call -> {
      FlushRequest req = FlushRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> ep.flush(Integer.toUnsignedLong(req.getTimeoutMs()), ok -> {
        if (ok) {
          call.reply(FlushResponse.getDefaultInstance());
        } else {
          call.fail();
        }
      }));
    });
    h.put("GetTraceStats", call -> onConsumer(call, (c, ep) ->
        call.reply(GetTraceStatsResponse.newBuilder().setTraceStats(ep.traceStats()).build())));
    return h;
  }

  private void enableTracing(MethodCall call) throws InvalidProtocolBufferException {
    EnableTracingRequest req = EnableTracingRequest.parseFrom(call.args());
    if (req.getAttachNotificationOnly()) {
      onConsumer(call, (c, ep) -> c.replaceEnableCall(call));
      return;
    }
    Optional<FdTraceFileSink> sink = Optional.empty();
    if (req.getTraceConfig().getWriteIntoFile() && req.getTraceConfig().getOutputPath().isEmpty()) {
      int fd = call.takeReceivedFd();
      if (fd >= 0) {
        try {
          sink = Optional.of(FdTraceFileSink.adopt(fd));
        } catch (IOException e) {
          LOG.log(Level.WARNING, "EnableTracing: " + e.getMessage());
          call.reply(EnableTracingResponse.newBuilder().setDisabled(true)
              .setError("the trace file passed with EnableTracing is unusable: " + e.getMessage()).build());
          return;
        }
      }
    }
    Optional<FdTraceFileSink> fileSink = sink;
    onConsumer(call, (c, ep) -> {
      c.replaceEnableCall(call);
      fileSink.ifPresent(s -> c.fileSink = s);
      String error = ep.enableTracing(req.getTraceConfig(), fileSink.map(s -> s));
      if (!error.isEmpty()) {
        c.closeFileSink();
      }
    }, () -> fileSink.ifPresent(ConsumerPortService::closeQuietly));
  }

  private void onConsumer(MethodCall call, BiConsumer<RemoteConsumer, ConsumerEndpoint> action) {
    onConsumer(call, action, () -> {});
  }

  /** Runs action on the service thread with the caller's endpoint; fails the call if it has none. */
  private void onConsumer(MethodCall call, BiConsumer<RemoteConsumer, ConsumerEndpoint> action,
      Runnable onFailure) {
    RemoteConsumer c = consumers.get(call.client().clientId());
    if (c == null) {
      onFailure.run();
      call.fail();
      return;
    }
    service.taskRunner().post(() -> {
      if (c.endpoint == null || c.gone) {
        onFailure.run();
        call.fail();
        return;
      }
      action.accept(c, c.endpoint);
    });
  }

  private static void closeQuietly(FdTraceFileSink sink) {
    try {
      sink.close();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "closing the trace file: " + e.getMessage());
    }
  }

  /** One consumer connection; its state lives on the service thread. */
  private static final class RemoteConsumer implements ConsumerCallbacks {
    ConsumerEndpoint endpoint;
    boolean gone;
    MethodCall enableCall;
    MethodCall readCall;
    FdTraceFileSink fileSink;

    void replaceEnableCall(MethodCall call) {
      if (enableCall != null && !enableCall.isDone()) {
        enableCall.fail();
      }
      enableCall = call;
    }

    void disconnect() {
      gone = true;
      if (endpoint != null) {
        endpoint.disconnect();
      }
      closeFileSink();
    }

    void closeFileSink() {
      if (fileSink != null) {
        closeQuietly(fileSink);
        fileSink = null;
      }
    }

    @Override
    public void onTracingDisabled(String error) {
      MethodCall call = enableCall;
      enableCall = null;
      if (call != null && !call.isDone()) {
        EnableTracingResponse.Builder r = EnableTracingResponse.newBuilder().setDisabled(true);
        if (!error.isEmpty()) {
          r.setError(error);
        }
        call.reply(r.build());
      }
    }

    @Override
    public void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore) {
      MethodCall call = readCall;
      if (call == null || call.isDone()) {
        return;
      }
      ReadBuffersResponse.Builder reply = ReadBuffersResponse.newBuilder();
      int replyBytes = 0;
      for (ReadBuffersResponse.Slice slice : slices) {
        int size = slice.getSerializedSize() + 4;
        if (replyBytes + size > MAX_READ_REPLY_BYTES && reply.getSlicesCount() > 0) {
          call.replyMore(reply.build());
          reply = ReadBuffersResponse.newBuilder();
          replyBytes = 0;
        }
        reply.addSlices(slice);
        replyBytes += size;
      }
      call.send(reply.build().toByteString(), hasMore, -1);
      if (!hasMore) {
        readCall = null;
      }
    }
  }
}
