package org.jperfetto.service;

import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;

/**
 * What the service tells a consumer. Called on the service thread; implementations must not
 * block.
 */
public interface ConsumerCallbacks {
  /**
   * The session ended: stopped (error empty) or refused/failed (error says why). Upstream's
   * EnableTracing reply is deferred until this moment and carries disabled=true and the error;
   * the IPC adapter replies from here.
   */
  void onTracingDisabled(String error);

  /**
   * One batch of trace data from ReadBuffers: packets cut in slices of at most
   * {@link ServiceLimits#MAX_SLICE_SIZE} bytes, the last of each packet with
   * last_slice_for_packet. A batch holds about {@link ServiceLimits#READ_BATCH_BYTES}; hasMore
   * is false on the last batch of a read (which may be empty).
   */
  void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore);

  /**
   * Asked before each batch of a read: false pauses the read after what was handed out (its
   * place kept, nothing lost) until the consumer calls {@link ConsumerEndpoint#resumeReadBuffers}.
   * A consumer on a socket answers false while its unsent replies are over a mark, so a slow or
   * stuck reader costs the service a bounded queue, not a copy of its buffers.
   */
  default boolean readyForTraceData() {
    return true;
  }

  /** Observable events the consumer asked for with observeEvents. */
  default void onObservableEvents(org.jperfetto.protos.ObservableEvents events) {}

  /** The outcome of cloneSession: on success error is empty and the uuid is the clone's. */
  default void onSessionCloned(boolean success, String error, long uuidMsb, long uuidLsb) {}

  /**
   * As {@link #onSessionCloned(boolean, String, long, long)}; wasWriteIntoFile: the clone was of
   * a write_into_file session and went into the file passed with the clone request (the service
   * keeps that file for the clone session; otherwise the caller may close it).
   */
  default void onSessionCloned(boolean success, String error, long uuidMsb, long uuidLsb,
      boolean wasWriteIntoFile) {
    onSessionCloned(success, error, uuidMsb, uuidLsb);
  }
}
