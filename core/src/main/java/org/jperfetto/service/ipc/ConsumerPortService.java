package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
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
import org.jperfetto.protos.AttachRequest;
import org.jperfetto.protos.AttachResponse;
import org.jperfetto.protos.ChangeTraceConfigRequest;
import org.jperfetto.protos.ChangeTraceConfigResponse;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.DetachRequest;
import org.jperfetto.protos.DetachResponse;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsRequest;
import org.jperfetto.protos.ObserveEventsResponse;
import org.jperfetto.protos.QueryCapabilitiesResponse;
import org.jperfetto.protos.QueryServiceStateRequest;
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
 * if any); ReadBuffers answers with a stream of ReadBuffersResponse, produced batch by batch as the
 * consumer's socket drains; Flush succeeds or fails as the service reports; ObserveEvents is a
 * stream closed by the next ObserveEvents (or an empty mask); QueryServiceState is cut into
 * replies that fit a frame; CloneSession is answered when the service reports the clone.
 * ReadBuffers, QueryServiceState and the observed events, the replies that can be large or many,
 * go to the socket only as it drains ({@link PacedReplies}). A method without a handler in
 * {@link #handlers} answers a failed reply.
 */
public final class ConsumerPortService {
  private static final System.Logger LOG = System.getLogger(ConsumerPortService.class.getName());
  public static final String SERVICE_NAME = "ConsumerPort";
  /** consumer_port.proto's methods in order (see ProducerPortService.METHODS). */
  static final List<String> METHODS = List.of("EnableTracing", "DisableTracing", "ReadBuffers",
      "FreeBuffers", "Flush", "StartTracing", "ChangeTraceConfig", "Detach", "Attach",
      "GetTraceStats", "ObserveEvents", "QueryServiceState", "QueryCapabilities",
      "SaveTraceForBugreport", "CloneSession");
  /**
   * Budget for one ReadBuffersResponse frame: the 128 KiB frame cap minus room for the IPCFrame
   * and length prefix. A maximal slice (130560 bytes) plus its tags fits.
   */
  static final int MAX_READ_REPLY_BYTES = 128 * 1024 - 160;
  private final TracingService service;
  private final Map<Long, RemoteConsumer> consumers = new ConcurrentHashMap<>();
  /**
   * The trace files of detached sessions (service thread only). The session, not the connection
   * that passed the file, owns it: the detached connection may go, and whoever attaches takes
   * the file over (closed on its FreeBuffers or disconnect), as upstream's session keeps its fd.
   */
  private final Map<DetachedKey, FdTraceFileSink> detachedFiles = new HashMap<>();

  /** A detached session's key: the key is per uid, as the service's Detach/Attach match them. */
  private record DetachedKey(int uid, String key) {}
  private final ServiceDefinition definition;

  public ConsumerPortService(TracingService service) {
    this.service = service;
    definition = ServiceDefinition.fromMethodNames(SERVICE_NAME, METHODS, handlers(),
        new ServiceListener() {
          @Override
          public void onClientBound(ClientInfo client) {
            RemoteConsumer c = new RemoteConsumer(client.uid());
            consumers.put(client.clientId(), c);
            service.taskRunner().runOrPost(() -> c.endpoint = service.connectConsumer(c, client.uid()));
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
      c.endRead(); // a newer read replaces an unfinished one
      c.readCall = call;
      ep.readBuffers();
    }));
    h.put("FreeBuffers", call -> onConsumer(call, (c, ep) -> {
      c.endRead();
      ep.freeBuffers();
      c.closeFileSink();
      call.reply(FreeBuffersResponse.getDefaultInstance());
    }));
    h.put("Flush", call -> {
      FlushRequest req = FlushRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> ep.flush(Integer.toUnsignedLong(req.getTimeoutMs()), req.getFlags(), ok -> {
        if (ok) {
          call.reply(FlushResponse.getDefaultInstance());
        } else {
          call.fail();
        }
      }));
    });
    h.put("GetTraceStats", call -> onConsumer(call, (c, ep) -> call.reply(traceStatsReply(ep.traceStats()))));
    h.put("ChangeTraceConfig", call -> {
      ChangeTraceConfigRequest req = ChangeTraceConfigRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> replyOrFail(call, ep.changeTraceConfig(req.getTraceConfig()),
          ChangeTraceConfigResponse.getDefaultInstance()));
    });
    h.put("Detach", call -> {
      DetachRequest req = DetachRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> {
        String error = ep.detach(req.getKey());
        if (error.isEmpty()) {
          c.endRead(); // the session's read ended with the detach
        }
        if (error.isEmpty() && c.fileSink != null) {
          detachedFiles.put(new DetachedKey(c.uid, req.getKey()), c.fileSink); // the session goes on writing
          c.fileSink = null;
        }
        replyOrFail(call, error, DetachResponse.getDefaultInstance());
      });
    });
    h.put("Attach", call -> {
      AttachRequest req = AttachRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> ep.attach(req.getKey()).ifPresentOrElse(cfg -> {
        FdTraceFileSink file = detachedFiles.remove(new DetachedKey(c.uid, req.getKey()));
        if (file != null) {
          c.closeFileSink(); // of an earlier session of this connection, if any
          c.fileSink = file;
        }
        call.reply(AttachResponse.newBuilder().setTraceConfig(cfg).build());
      }, call::fail));
    });
    h.put("ObserveEvents", call -> {
      ObserveEventsRequest req = ObserveEventsRequest.parseFrom(call.args());
      int mask = 0;
      for (ObservableEvents.Type t : req.getEventsToObserveList()) {
        mask |= 1 << t.getNumber(); // the core keeps one bit per type number
      }
      int eventsMask = mask;
      onConsumer(call, (c, ep) -> {
        c.closeObserveStream();
        c.observeCall = call;
        ep.observeEvents(eventsMask);
        if (eventsMask == 0) {
          c.closeObserveStream();
        }
      });
    });
    h.put("QueryServiceState", call -> {
      QueryServiceStateRequest req = QueryServiceStateRequest.parseFrom(call.args());
      onConsumer(call, (c, ep) -> {
        if (c.paced.full()) {
          LOG.log(Level.INFO, () -> "QueryServiceState refused: " + PacedReplies.MAX_QUEUED_STREAMS
              + " answers already wait for client " + call.client().clientId() + "'s socket");
          call.fail();
          return;
        }
        c.paced.offer(call, new ServiceStateReplies(ep.queryServiceState(req.getSessionsOnly()),
            MAX_READ_REPLY_BYTES), true);
      });
    });
    h.put("QueryCapabilities", call -> onConsumer(call, (c, ep) -> call.reply(
        QueryCapabilitiesResponse.newBuilder().setCapabilities(ep.queryCapabilities()).build())));
    h.put("SaveTraceForBugreport", call -> onConsumer(call, (c, ep) -> call.reply(ep.saveTraceForBugreport())));
    h.put("CloneSession", call -> {
      CloneSessionRequest req = CloneSessionRequest.parseFrom(call.args());
      // The client may pass a file: used only if the session to clone writes into a file.
      Optional<FdTraceFileSink> file = Optional.empty();
      int fd = call.takeReceivedFd();
      if (fd >= 0) {
        try {
          file = Optional.of(FdTraceFileSink.adopt(fd));
        } catch (IOException e) {
          call.reply(CloneSessionResponse.newBuilder().setSuccess(false)
              .setError("the file passed with CloneSession is unusable: " + e.getMessage()).build());
          return;
        }
      }
      Optional<FdTraceFileSink> outputFile = file;
      onConsumer(call, (c, ep) -> {
        if (c.cloneCall != null && !c.cloneCall.isDone()) {
          c.cloneCall.fail();
        }
        c.cloneCall = call;
        if (c.cloneFile != null) {
          closeQuietly(c.cloneFile); // of the replaced call: its clone can no longer write there
        }
        c.cloneFile = outputFile.orElse(null);
        ep.cloneSession(req.getSessionId(), req.getUniqueSessionName(), outputFile.map(s -> s));
      }, () -> outputFile.ifPresent(ConsumerPortService::closeQuietly));
    });
    return h;
  }

  /**
   * GetTraceStats' answer in one frame: the per-writer chunk histograms grow with the session's
   * writers (a few thousand fill a frame), so past the budget they are left out of the answer;
   * the trace's own stats packet still has them.
   */
  static GetTraceStatsResponse traceStatsReply(org.jperfetto.protos.TraceStats stats) {
    GetTraceStatsResponse whole = GetTraceStatsResponse.newBuilder().setTraceStats(stats).build();
    if (whole.getSerializedSize() <= MAX_READ_REPLY_BYTES) {
      return whole;
    }
    LOG.log(Level.DEBUG, () -> "GetTraceStats: " + stats.getWriterStatsCount()
        + " writers' histograms left out of the answer, which would not fit a frame");
    return GetTraceStatsResponse.newBuilder().setTraceStats(
        stats.toBuilder().clearWriterStats().clearChunkPayloadHistogramDef()).build();
  }

  private static void replyOrFail(MethodCall call, String error, com.google.protobuf.MessageLite reply) {
    if (error.isEmpty()) {
      call.reply(reply);
    } else {
      LOG.log(Level.INFO, () -> call.methodName() + " refused: " + error);
      call.fail();
    }
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
    service.taskRunner().runOrPost(() -> {
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
  private final class RemoteConsumer implements ConsumerCallbacks {
    final int uid;
    ConsumerEndpoint endpoint;
    boolean gone;
    MethodCall enableCall;
    MethodCall readCall;
    MethodCall observeCall;
    MethodCall cloneCall;
    /** The file passed with the pending CloneSession, if any. */
    FdTraceFileSink cloneFile;
    FdTraceFileSink fileSink;
    /**
     * This connection's large and repeated replies, handed to the socket as it drains; the service
     * hands out the read's next batch only when {@link #readyForTraceData} says so, that is when
     * nothing waits here.
     */
    final PacedReplies paced = new PacedReplies(service.taskRunner(), this::onIdle);
    /** Observed events not yet handed to the socket, merged while it is behind. */
    private final ObservedEventsBacklog events = new ObservedEventsBacklog();
    /** The service paused the read on our word; {@link #onIdle} resumes it. */
    private boolean readPaused;

    RemoteConsumer(int uid) {
      this.uid = uid;
    }

    void replaceEnableCall(MethodCall call) {
      if (enableCall != null && !enableCall.isDone()) {
        enableCall.fail();
      }
      enableCall = call;
    }

    /** Ends the observe stream, with the events it still holds (a bounded backlog) before its end. */
    void closeObserveStream() {
      if (observeCall != null && !observeCall.isDone()) {
        paced.cancel(observeCall);
        while (!events.isEmpty()) {
          observeCall.replyMore(events.takeReply(MAX_READ_REPLY_BYTES));
        }
        observeCall.reply(ObserveEventsResponse.getDefaultInstance());
      }
      observeCall = null;
    }

    @Override
    public void onObservableEvents(ObservableEvents observed) {
      if (observeCall == null || observeCall.isDone() || gone) {
        return;
      }
      events.add(observed);
      if (paced.idle(observeCall)) {
        sendEvents();
      } // else onIdle sends them, merged with what comes meanwhile
    }

    /** Hands the backlog to the socket, taken reply by reply as it drains (so later events join it). */
    private void sendEvents() {
      MethodCall call = observeCall;
      if (call == null || call.isDone() || events.isEmpty()) {
        return;
      }
      paced.offer(call, new java.util.Iterator<>() {
        @Override
        public boolean hasNext() {
          return !events.isEmpty();
        }

        @Override
        public ByteString next() {
          return events.takeReply(MAX_READ_REPLY_BYTES);
        }
      }, false);
    }

    @Override
    public void onSessionCloned(boolean success, String error, long uuidMsb, long uuidLsb,
        boolean wasWriteIntoFile) {
      MethodCall call = cloneCall;
      cloneCall = null;
      if (cloneFile != null) {
        if (wasWriteIntoFile) {
          closeFileSink();
          fileSink = cloneFile; // the clone session's file now: closed with its buffers
        } else {
          closeQuietly(cloneFile);
        }
        cloneFile = null;
      }
      if (call != null && !call.isDone()) {
        call.reply(CloneSessionResponse.newBuilder().setSuccess(success).setError(error)
            .setUuidMsb(uuidMsb).setUuidLsb(uuidLsb).setWasWriteIntoFile(wasWriteIntoFile).build());
      }
    }

    void disconnect() {
      gone = true;
      paced.close();
      if (endpoint != null) {
        endpoint.disconnect();
      }
      closeFileSink();
      if (cloneFile != null) {
        closeQuietly(cloneFile);
        cloneFile = null;
      }
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
      if (readCall == null || readCall.isDone() || gone) {
        return;
      }
      List<ByteString> replies = new java.util.ArrayList<>();
      ReadReplyEncoder.encode(slices, MAX_READ_REPLY_BYTES, replies::add);
      paced.offer(readCall, replies.iterator(), !hasMore);
    }

    @Override
    public boolean readyForTraceData() {
      MethodCall call = readCall;
      if (call == null || call.isDone() || gone) {
        return false; // nobody to hand it to: what is unread stays in the buffers
      }
      if (paced.idle(call)) {
        return true;
      }
      readPaused = true; // until onIdle
      return false;
    }

    /** Ends the read in progress, if any: its call fails, what was not sent is dropped. */
    void endRead() {
      if (readCall != null && !readCall.isDone()) {
        paced.cancel(readCall);
        readCall.fail();
      }
      readCall = null;
      readPaused = false;
    }

    /** The socket took the queued replies: observed events first, then the read's next batches. */
    private void onIdle() {
      if (gone) {
        return;
      }
      sendEvents();
      MethodCall call = readCall;
      if (readPaused && call != null && !call.isDone() && endpoint != null) {
        readPaused = false;
        endpoint.resumeReadBuffers(); // asks readyForTraceData before each batch
      }
    }
  }
}
