package org.jperfetto.service;

import java.util.List;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.service.buffer.PatchBatch;

/**
 * The producer port as Java calls: what a connected producer asks of the service. Every method
 * must be called on the service's {@link TaskRunner} thread. Everything passed in is untrusted.
 */
public interface ProducerEndpoint {
  /** The service's id for this producer (1..65535), unique among connected producers. */
  int producerId();

  /** InitializeConnectionResponse.using_shmem_provided_by_producer. */
  boolean usingProducerProvidedSmb();

  /** InitializeConnectionResponse.direct_smb_patching_supported. */
  boolean directSmbPatchingSupported();

  /** The SMB in use, if already set up (created at the first data source setup). */
  java.util.Optional<SharedMemory> sharedMemory();

  /** Registers a data source; returns "" or why it was refused (empty name, duplicate id). */
  String registerDataSource(DataSourceDescriptor descriptor);

  /** Unregisters a data source by name, stopping its instances. */
  void unregisterDataSource(String name);

  /** Replaces the descriptor of a registered data source (matched by id, else by name). */
  void updateDataSource(DataSourceDescriptor descriptor);

  /**
   * Moves the chunks named by the request from the SMB into their trace buffers, applies the
   * patches and acknowledges flush_request_id; then runs ack (the CommitData reply).
   */
  void commitData(CommitDataRequest request, Runnable ack);

  /**
   * The parts of a CommitData, one call each, for a caller that decodes the request itself: for
   * every chunks_to_move entry without inline data, {@link #commitChunk}; then
   * {@link #endCommit}. The same checks and the same effect as {@link #commitData}.
   *
   * @return false once the endpoint is disconnected (the rest of the request is moot)
   */
  boolean commitChunk(int page, int chunk, int targetBuffer);

  /** A chunks_to_patch entry of a CommitData decoded by the caller (after its chunks moved). */
  void patchChunk(int targetBuffer, int writerId, int chunkId, PatchBatch patches, boolean morePatches);

  /** Ends a CommitData decoded by the caller: acknowledges flushRequestId (0: none). */
  void endCommit(long flushRequestId);

  /** Binds a writer to a trace buffer (the service-wide id from setup_data_source). */
  void registerTraceWriter(int writerId, int targetBuffer);

  void unregisterTraceWriter(int writerId);

  /** For descriptors with will_notify_on_start. */
  void notifyDataSourceStarted(long instanceId);

  /** For descriptors with will_notify_on_stop. */
  void notifyDataSourceStopped(long instanceId);

  /**
   * ActivateTriggers: starts, stops or snapshots the sessions whose trigger_config names one of
   * these triggers (and admits this producer).
   */
  void activateTriggers(List<String> triggerNames);

  /** Runs done once every command sent to this producer before has been posted. */
  void sync(Runnable done);

  /** The producer went away: its SMB is scraped, its data sources stop, its state is freed. */
  void disconnect();
}
