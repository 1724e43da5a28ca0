package org.jperfetto.service;

import org.jperfetto.protos.DataSourceConfig;

/**
 * What the service asks of a producer; the IPC adapter turns each call into a GetAsyncCommand
 * reply. Called on the service thread; implementations must not block.
 */
public interface ProducerCallbacks {
  /**
   * The producer's SMB is ready (setup_tracing): the service created it at the first data source
   * setup for this producer, or adopted the one the producer provided.
   */
  void setupTracing(SharedMemory smb, int pageSizeKb);

  /** setup_data_source: config.target_buffer is the service-wide buffer id to commit into. */
  void setupDataSource(long instanceId, DataSourceConfig config);

  /** start_data_source. */
  void startDataSource(long instanceId, DataSourceConfig config);

  /** stop_data_source. */
  void stopDataSource(long instanceId);

  /** flush: commit everything the instances wrote, then CommitData with flush_request_id. */
  void flush(long requestId, long[] dataSourceInstanceIds, long flags);

  /** clear_incremental_state. */
  void clearIncrementalState(long[] dataSourceInstanceIds);

  /**
   * The service dropped this producer (it misbehaved); the transport should close the connection.
   * Not called when the producer itself disconnected.
   */
  void onDisconnectedByService(String reason);
}
