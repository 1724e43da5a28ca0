package org.jperfetto.producer;

import org.jperfetto.protos.DataSourceConfig;

/**
 * An instance of a data source in this producer, set up for a session of the service or by
 * startup tracing (keeps the instance's type parameter together with its data source).
 * Producer thread.
 */
final class ActiveInstance<S> {
  final DataSource<S> dataSource;
  final DataSourceInstance<S> instance;
  /** Started by startup tracing: a session's start_data_source does not start it again. */
  boolean startedEarly;
  /**
   * The config a session's setup_data_source gave this instance, as the service sent it (null while
   * a startup instance waits for adoption): how a second setup with an equal config finds the next
   * data source of the same name (see {@code TracingProducer}).
   */
  DataSourceConfig sessionConfig;
  /** Told to stop: no longer counts as holding its session's config. */
  boolean stopping;

  private ActiveInstance(DataSource<S> dataSource, DataSourceInstance<S> instance) {
    this.dataSource = dataSource;
    this.instance = instance;
  }

  /** Sets up an instance id of ds writing through arbiter; null if ds has no free slot. */
  static <S> ActiveInstance<S> setUp(DataSource<S> ds, long id, DataSourceConfig config,
      SharedMemoryArbiter arbiter) {
    int index = ds.freeSlot();
    if (index < 0) {
      return null;
    }
    DataSourceInstance<S> instance = new DataSourceInstance<>(id, index, config);
    ds.setUp(instance, arbiter, config.getTargetBuffer());
    instance.state(ds.handler().onSetup(instance));
    return new ActiveInstance<>(ds, instance);
  }

  void start(SharedMemoryArbiter arbiter) {
    DataSource.Slot<S> slot = dataSource.slot(instance.index());
    if (slot.arbiter() != arbiter) {
      dataSource.setUp(instance, arbiter, instance.config().getTargetBuffer());
    }
    dataSource.start(instance);
  }

  /** Whether this instance serves a session with exactly this config and is not stopping. */
  boolean serves(DataSourceConfig config) {
    return !stopping && config.equals(sessionConfig);
  }

  void stop(DataSourceHandler.StopHandle handle) {
    stopping = true;
    dataSource.handler().onStop(instance, handle);
  }

  void release() {
    DataSource.Slot<S> slot = dataSource.slot(instance.index());
    if (slot != null && slot.instance() == instance) {
      dataSource.release(instance.index());
    }
  }

  void flush(DataSourceHandler.FlushHandle done) {
    dataSource.handler().onFlush(instance, done);
  }

  void clearIncrementalState() {
    instance.clearIncrementalState();
    dataSource.incrementalStateCleared();
    dataSource.handler().onClearIncrementalState(instance);
  }
}
