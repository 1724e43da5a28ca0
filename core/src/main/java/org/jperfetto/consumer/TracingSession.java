package org.jperfetto.consumer;

import java.util.concurrent.CompletableFuture;
import org.jperfetto.protos.TraceConfig;

/**
 * The session a {@link TracingConsumer} enabled or attached to. The service runs at most one
 * session per consumer connection, so stopping and reading back go through the consumer; this
 * handle tells when the session ended.
 */
public final class TracingSession {
  private final TraceConfig traceConfig;
  private final CompletableFuture<TracingDisabled> disabled;

  TracingSession(TraceConfig traceConfig, CompletableFuture<TracingDisabled> disabled) {
    this.traceConfig = traceConfig;
    this.disabled = disabled;
  }

  /** The config the session runs with (for an attached session, as the service returned it). */
  public TraceConfig traceConfig() {
    return traceConfig;
  }

  /**
   * Completes when the service reports the session disabled (its duration elapsed, it was
   * stopped, or it failed), or the connection is lost. It always completes normally; the
   * {@link TracingDisabled#error()} tells what went wrong, if anything.
   */
  public CompletableFuture<TracingDisabled> disabled() {
    return disabled;
  }
}
