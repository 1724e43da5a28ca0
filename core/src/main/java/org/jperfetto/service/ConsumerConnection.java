package org.jperfetto.service;

import java.util.Optional;
import java.util.function.Consumer;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;

/** The service's side of one connected consumer: at most one tracing session at a time. */
final class ConsumerConnection implements ConsumerEndpoint {
  /** The parts of the service a consumer's requests go to (the same for every consumer). */
  record ServiceParts(ServiceState state, SessionLifecycle lifecycle, DataSources dataSources, Flushes flushes,
      SessionReader reader, SessionRequests requests, ServiceQueries queries) {}

  private final ServiceParts service;
  private final ServiceState state;
  final int uid;
  final ConsumerCallbacks callbacks;
  ServiceSession session;
  /** ObserveEvents mask: bits of {@code 1 << ObservableEvents.Type}. */
  int observedEvents;
  private boolean connected = true;

  /** Whether the consumer asked (ObserveEvents) to be told of events of this type. */
  boolean observes(ObservableEvents.Type type) {
    return (observedEvents & (1 << type.getNumber())) != 0;
  }

  ConsumerConnection(ServiceParts service, int uid, ConsumerCallbacks callbacks) {
    this.service = service;
    this.state = service.state();
    this.uid = uid;
    this.callbacks = callbacks;
  }

  @Override
  public String enableTracing(TraceConfig config, Optional<TraceFileSink> fileSink) {
    state.checkThread();
    String error = connected ? service.lifecycle().enableTracing(this, config, fileSink) : "consumer disconnected";
    if (!error.isEmpty()) {
      callbacks.onTracingDisabled(error);
    }
    return error;
  }

  @Override
  public void startTracing() {
    state.checkThread();
    if (session != null) {
      service.lifecycle().startTracing(session);
    }
  }

  @Override
  public String changeTraceConfig(TraceConfig config) {
    state.checkThread();
    return session == null
        ? "no tracing session to change" : service.requests().changeTraceConfig(session, config);
  }

  @Override
  public String detach(String key) {
    state.checkThread();
    if (session == null) {
      return "no tracing session to detach";
    }
    return service.requests().detach(this, key);
  }

  @Override
  public Optional<TraceConfig> attach(String key) {
    state.checkThread();
    return connected ? service.requests().attach(this, key) : Optional.empty();
  }

  @Override
  public void observeEvents(int eventsMask) {
    state.checkThread();
    service.dataSources().observeEvents(this, eventsMask);
  }

  @Override
  public org.jperfetto.protos.TracingServiceState queryServiceState(boolean sessionsOnly) {
    state.checkThread();
    return service.queries().serviceState(uid, sessionsOnly);
  }

  @Override
  public org.jperfetto.protos.TracingServiceCapabilities queryCapabilities() {
    state.checkThread();
    return ServiceQueries.capabilities();
  }

  @Override
  public org.jperfetto.protos.SaveTraceForBugreportResponse saveTraceForBugreport() {
    state.checkThread();
    return org.jperfetto.protos.SaveTraceForBugreportResponse.newBuilder().setSuccess(false)
        .setMsg("SaveTraceForBugreport is not supported by this service").build();
  }

  @Override
  public void cloneSession(long sessionId, String uniqueSessionName, Optional<TraceFileSink> outputFile) {
    state.checkThread();
    service.requests().cloneSession(this, sessionId, uniqueSessionName, outputFile);
  }

  @Override
  public void disableTracing() {
    state.checkThread();
    if (session != null) {
      service.lifecycle().disableTracing(session);
    }
  }

  @Override
  public void flush(long timeoutMs, long flags, Consumer<Boolean> done) {
    state.checkThread();
    if (session == null) {
      done.accept(false);
      return;
    }
    service.flushes().flush(session, timeoutMs, flags, done);
  }

  @Override
  public void readBuffers() {
    state.checkThread();
    if (session == null) {
      callbacks.onTraceData(java.util.List.of(), false);
      return;
    }
    service.reader().readBuffers(session);
  }

  @Override
  public void resumeReadBuffers() {
    state.checkThread();
    if (session != null) {
      service.reader().resumeReadBuffers(session);
    }
  }

  @Override
  public void freeBuffers() {
    state.checkThread();
    if (session != null) {
      service.lifecycle().freeSession(session);
    }
  }

  @Override
  public TraceStats traceStats() {
    state.checkThread();
    return service.queries().traceStats(session);
  }

  @Override
  public void disconnect() {
    state.checkThread();
    if (connected) {
      connected = false;
      if (session != null) {
        service.lifecycle().freeSession(session);
      }
      state.removeConsumer(this);
    }
  }
}
