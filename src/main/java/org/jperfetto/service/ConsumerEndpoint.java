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
   * @param fileSink where a write_into_file session writes (required exactly when the config
   *     sets write_into_file): the buffers drain into it every file_write_period_ms and on stop
   */
  String enableTracing(TraceConfig config, Optional<TraceFileSink> fileSink);

  /** Starts a session enabled with deferred_start. */
  void startTracing();

  /**
   * Changes the running session's config where upstream allows it: only the data sources'
   * producer_name_filter and producer_name_regex_filter. Producers newly matched get the data
   * source set up and started. Returns "" or why the change was refused (nothing changes then).
   */
  String changeTraceConfig(TraceConfig config);

  /**
   * Detaches the session from this consumer under key: it keeps running without a consumer
   * (ending it no longer notifies anyone) until a consumer of the same uid attaches. Returns ""
   * or the error.
   */
  String detach(String key);

  /**
   * Attaches the detached session of this consumer's uid with that key; returns its config, or
   * empty if there is none (or this consumer already has a session).
   */
  Optional<TraceConfig> attach(String key);

  /**
   * Chooses the observable events (bits of 1 &lt;&lt; ObservableEvents.Type) reported through
   * {@link ConsumerCallbacks#onObservableEvents}; 0 stops them. Enabling data source instance
   * events first reports the current state of every instance of the session.
   */
  void observeEvents(int eventsMask);

  /**
   * The service state: producers and data sources (unless sessionsOnly) and the sessions this
   * consumer may see (its uid's; every one for root).
   */
  org.jperfetto.protos.TracingServiceState queryServiceState(boolean sessionsOnly);

  /** What this service supports. */
  org.jperfetto.protos.TracingServiceCapabilities queryCapabilities();

  /** SaveTraceForBugreport: not supported by this service (success=false and why). */
  org.jperfetto.protos.SaveTraceForBugreportResponse saveTraceForBugreport();

  /**
   * Clones a session (this consumer must have none): flushes it, then copies its buffers into a
   * new read-only session owned by this consumer that ReadBuffers then reads; the original keeps
   * running. By id (uniqueSessionName empty) or by unique_session_name (sessionId ignored).
   * The outcome arrives through {@link ConsumerCallbacks#onSessionCloned}.
   */
  default void cloneSession(long sessionId, String uniqueSessionName) {
    cloneSession(sessionId, uniqueSessionName, Optional.empty());
  }

  /**
   * As {@link #cloneSession(long, String)} with the file the consumer passed, as upstream: if the
   * session to clone is a write_into_file one, the file is required; what the original wrote so
   * far is copied into it, then the cloned buffers are written after it. For other sessions the
   * file is not used (the clone is read with ReadBuffers).
   */
  void cloneSession(long sessionId, String uniqueSessionName, Optional<TraceFileSink> outputFile);

  /**
   * Stops the data sources, waits for the acks of those that notify on stop (at most
   * data_source_stop_timeout_ms), then reports {@link ConsumerCallbacks#onTracingDisabled}("").
   */
  void disableTracing();

  /**
   * Asks the producers to commit what they wrote; done(true) when all acked, done(false) on
   * timeout (timeoutMs 0: the config's flush_timeout_ms, default 5000). flags (FlushRequest.flags:
   * initiator, reason, clone target) reach the producers' flush commands unchanged.
   */
  void flush(long timeoutMs, long flags, Consumer<Boolean> done);

  /** Reads the buffers (destructively) into {@link ConsumerCallbacks#onTraceData} batches. */
  void readBuffers();

  /**
   * Goes on with a read that paused because {@link ConsumerCallbacks#readyForTraceData} said
   * false; nothing happens if there is none (it ended, or the session was freed or detached).
   */
  void resumeReadBuffers();

  /** Frees the session and its buffers (stopping it first if needed). */
  void freeBuffers();

  /** Trace stats of this consumer's session (service-wide counters if it has none). */
  TraceStats traceStats();

  /** The consumer went away: its session ends and is freed. */
  void disconnect();

  /** The sink for write_into_file sessions (issue 6): a file the consumer passed. */
  interface TraceFileSink {
    /** Takes data (it may hold it back until {@link #flush()}). */
    void write(java.nio.ByteBuffer data) throws java.io.IOException;

    /** Writes out whatever {@link #write} held back. */
    default void flush() throws java.io.IOException {}

    /**
     * Writes everything written into this file so far into target (cloning a write_into_file
     * session); returns the number of bytes copied.
     *
     * @throws java.io.IOException if this file cannot be read back (e.g. a pipe)
     */
    default long copyTo(TraceFileSink target) throws java.io.IOException {
      throw new java.io.IOException("this trace file cannot be read back");
    }
  }
}
