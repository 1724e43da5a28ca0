package org.jperfetto.service;

import java.util.Optional;
import java.util.function.Consumer;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;

/**
 * The consumer port as Java calls. Every method must be called on the service's
 * {@link TaskRunner} thread. A consumer owns at most one tracing session at a time.
 */
public interface ConsumerEndpoint {
  /**
   * Creates the session's buffers, sets up the matching data sources and (unless
   * deferred_start) starts them. On a refused config nothing changes, the error is returned and
   * also reported through {@link ConsumerCallbacks#onTracingDisabled}; "" on success.
   *
   * @param fileSink where write_into_file would write (not supported yet: must be empty)
   */
  String enableTracing(TraceConfig config, Optional<TraceFileSink> fileSink);

  /** Starts a session enabled with deferred_start. */
  void startTracing();

  /**
   * Stops the data sources, waits for the acks of those that notify on stop (at most
   * data_source_stop_timeout_ms), then reports {@link ConsumerCallbacks#onTracingDisabled}("").
   */
  void disableTracing();

  /**
   * Asks the producers to commit what they wrote; done(true) when all acked, done(false) on
   * timeout (timeoutMs 0: the config's flush_timeout_ms, default 5000).
   */
  void flush(long timeoutMs, Consumer<Boolean> done);

  /** Reads the buffers (destructively) into {@link ConsumerCallbacks#onTraceData} batches. */
  void readBuffers();

  /** Frees the session and its buffers (stopping it first if needed). */
  void freeBuffers();

  /** Trace stats of this consumer's session (service-wide counters if it has none). */
  TraceStats traceStats();

  /** The consumer went away: its session ends and is freed. */
  void disconnect();

  /** The sink for write_into_file sessions (issue 6): a file the consumer passed. */
  interface TraceFileSink {
    void write(java.nio.ByteBuffer data) throws java.io.IOException;
  }
}
