package org.jperfetto.service;

import java.util.Optional;
import java.util.function.Consumer;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;

/** The service's side of one connected consumer: at most one tracing session at a time. */
final class ConsumerConnection implements ConsumerEndpoint {
  private final TracingService service;
  final int uid;
  final ConsumerCallbacks callbacks;
  TracingSession session;
  /** ObserveEvents mask: bits of {@code 1 << ObservableEvents.Type}. */
  int observedEvents;
  private boolean connected = true;

  /** Whether the consumer asked (ObserveEvents) to be told of events of this type. */
  boolean observes(ObservableEvents.Type type) {
    return (observedEvents & (1 << type.getNumber())) != 0;
  }

  ConsumerConnection(TracingService service, int uid, ConsumerCallbacks callbacks) {
    this.service = service;
    this.uid = uid;
    this.callbacks = callbacks;
  }

  @Override
  public String enableTracing(TraceConfig config, Optional<TraceFileSink> fileSink) {
    service.checkThread();
    String error = connected ? service.enableTracing(this, config, fileSink) : "consumer disconnected";
    if (!error.isEmpty()) {
      callbacks.onTracingDisabled(error);
    }
    return error;
  }

  @Override
  public void startTracing() {
    service.checkThread();
    if (session != null) {
      service.startTracing(session);
    }
  }

  @Override
  public String changeTraceConfig(TraceConfig config) {
    service.checkThread();
    return session == null
        ? "no tracing session to change" : service.sessionRequests().changeTraceConfig(session, config);
  }

  @Override
  public String detach(String key) {
    service.checkThread();
    if (session == null) {
      return "no tracing session to detach";
    }
    return service.sessionRequests().detach(this, key);
  }

  @Override
  public Optional<TraceConfig> attach(String key) {
    service.checkThread();
    return connected ? service.sessionRequests().attach(this, key) : Optional.empty();
  }

  @Override
  public void observeEvents(int eventsMask) {
    service.checkThread();
    service.observeEvents(this, eventsMask);
  }

  @Override
  public org.jperfetto.protos.TracingServiceState queryServiceState(boolean sessionsOnly) {
    service.checkThread();
    return service.queries().serviceState(uid, sessionsOnly);
  }

  @Override
  public org.jperfetto.protos.TracingServiceCapabilities queryCapabilities() {
    service.checkThread();
    return ServiceQueries.capabilities();
  }

  @Override
  public org.jperfetto.protos.SaveTraceForBugreportResponse saveTraceForBugreport() {
    service.checkThread();
    return org.jperfetto.protos.SaveTraceForBugreportResponse.newBuilder().setSuccess(false)
        .setMsg("SaveTraceForBugreport is not supported by this service").build();
  }

  @Override
  public void cloneSession(long sessionId, String uniqueSessionName, Optional<TraceFileSink> outputFile) {
    service.checkThread();
    service.sessionRequests().cloneSession(this, sessionId, uniqueSessionName, outputFile);
  }

  @Override
  public void disableTracing() {
    service.checkThread();
    if (session != null) {
      service.disableTracing(session);
    }
  }

  @Override
  public void flush(long timeoutMs, long flags, Consumer<Boolean> done) {
    service.checkThread();
    if (session == null) {
      done.accept(false);
      return;
    }
    service.flush(session, timeoutMs, flags, done);
  }

  @Override
  public void readBuffers() {
    service.checkThread();
    if (session == null) {
      callbacks.onTraceData(java.util.List.of(), false);
      return;
    }
    service.reader().readBuffers(session);
  }

  @Override
  public void resumeReadBuffers() {
    service.checkThread();
    if (session != null) {
      service.reader().resumeReadBuffers(session);
    }
  }

  @Override
  public void freeBuffers() {
    service.checkThread();
    if (session != null) {
      service.freeSession(session);
    }
  }

  @Override
  public TraceStats traceStats() {
    service.checkThread();
    return service.queries().traceStats(session);
  }

  @Override
  public void disconnect() {
    service.checkThread();
    if (connected) {
      connected = false;
      if (session != null) {
        service.freeSession(session);
      }
      service.removeConsumer(this);
    }
  }
}
