package org.jperfetto.producer;

/**
 * Callbacks of a {@link DataSource}, run on the producer's own thread (one at a time, never on a
 * tracing thread). They must not block for long: stopping can be finished later through the
 * {@link StopHandle}.
 *
 * @param <S> the per-instance state the data source keeps (from {@link #onSetup})
 */
public interface DataSourceHandler<S> {
  /** A session set up an instance; returns its state (may be null). */
  default S onSetup(DataSourceInstance<S> instance) {
    return null;
  }

  /**
   * The instance is starting: {@link DataSource#trace} reaches it once this returns (then comes
   * {@link #onActive}).
   */
  default void onStart(DataSourceInstance<S> instance) {}

  /**
   * The instance has started and {@link DataSource#trace} reaches it; called right after {@link
   * #onStart}. A data source whose callers decide to trace by a signal of its own (TrackEvent's
   * enabled categories) raises that signal here: raised in onStart, a thread that saw it could
   * trace before the instance was active, and what it wrote would go nowhere.
   */
  default void onActive(DataSourceInstance<S> instance) {}

  /**
   * The instance is stopping. Call {@code stop.done()} when finished (now or later, from any
   * thread); only then is the instance disabled and, if the descriptor sets will_notify_on_stop,
   * the service told. The default is done at once.
   */
  default void onStop(DataSourceInstance<S> instance, StopHandle stop) {
    stop.done();
  }

  /** The service asked for a flush of the instance; what the writers hold is committed after this. */
  default void onFlush(DataSourceInstance<S> instance) {}

  /**
   * The service asked for a flush of the instance; the flush is acknowledged once every flushed
   * instance called {@code flush.done()} (now or later, from any thread), as upstream's
   * {@code FlushArgs::HandleFlushAsynchronously}. A data source that must wait for another thread
   * (a stream to drain) does it here rather than blocking the producer's thread, which also carries
   * every writer's commits. The default runs {@link #onFlush(DataSourceInstance)} and is done.
   */
  default void onFlush(DataSourceInstance<S> instance, FlushHandle flush) {
    onFlush(instance);
    flush.done();
  }

  /**
   * The service asked to forget incremental state (interning tables and the like). Only data
   * sources whose descriptor sets handles_incremental_state_clear are asked; one that interns or
   * describes tracks once per sequence must set it, or a ring buffer that wraps leaves its packets
   * unreadable (docs/flight-recorder.md). {@link DataSourceInstance#incrementalStateGeneration()}
   * moves at the same time, for writers that check it on their next packet.
   */
  default void onClearIncrementalState(DataSourceInstance<S> instance) {}

  /** Finishes an asynchronous flush. */
  @FunctionalInterface
  interface FlushHandle {
    /** The instance's part of the flush is committed; later calls do nothing. */
    void done();
  }

  /** Finishes an asynchronous stop. */
  @FunctionalInterface
  interface StopHandle {
    /** The data source is done stopping; later calls do nothing. */
    void done();
  }
}
