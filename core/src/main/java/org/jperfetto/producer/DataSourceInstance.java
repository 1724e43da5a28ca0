package org.jperfetto.producer;

import org.jperfetto.protos.DataSourceConfig;

/**
 * One instance of a data source in one tracing session: its id from the service, its config, and
 * the state its handler gave it.
 *
 * @param <S> the handler's per-instance state
 */
public final class DataSourceInstance<S> {
  private final long instanceId;
  private final int index;
  private final DataSourceConfig config;
  private volatile S state;
  private volatile int incrementalStateGeneration;

  DataSourceInstance(long instanceId, int index, DataSourceConfig config) {
    this.instanceId = instanceId;
    this.index = index;
    this.config = config;
  }

  /** The id the service gave the instance (new_instance_id). */
  public long instanceId() {
    return instanceId;
  }

  /** Slot of the instance in its data source, 0..{@link DataSource#MAX_INSTANCES}-1. */
  public int index() {
    return index;
  }

  /** The session's config for this data source (target_buffer, name, per-source configs). */
  public DataSourceConfig config() {
    return config;
  }

  /** What {@link DataSourceHandler#onSetup} returned. */
  public S state() {
    return state;
  }

  void state(S value) {
    state = value;
  }

  /** Bumped each time the service clears incremental state; a writer layer compares it. */
  public int incrementalStateGeneration() {
    return incrementalStateGeneration;
  }

  void clearIncrementalState() {
    incrementalStateGeneration++;
  }

  @Override
  public String toString() {
    return "DataSourceInstance(id=" + instanceId + " index=" + index + " name=" + config.getName() + ")";
  }
}
