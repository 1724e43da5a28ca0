package org.jperfetto.service;

import java.util.Optional;
import java.util.function.Consumer;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;

/** The service's side of one connected consumer: at most one tracing session at a time. */
final class ConsumerConnection implements ConsumerEndpoint {
  private final TracingService service;
  final int uid;
  final ConsumerCallbacks callbacks;
  TracingSession session;
  private boolean connected = true;

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
  public void disableTracing() {
    service.checkThread();
    if (session != null) {
      service.disableTracing(session);
    }
  }

  @Override
  public void flush(long timeoutMs, Consumer<Boolean> done) {
    service.checkThread();
    if (session == null) {
      done.accept(false);
      return;
    }
    service.flush(session, timeoutMs, done);
  }

  @Override
  public void readBuffers() {
    service.checkThread();
    if (session == null) {
      callbacks.onTraceData(java.util.List.of(), false);
      return;
    }
    service.readBuffers(session);
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
    return service.traceStats(session);
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
