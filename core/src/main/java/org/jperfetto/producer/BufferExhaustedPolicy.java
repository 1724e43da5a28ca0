package org.jperfetto.producer;

/**
 * What a {@link TraceWriter} does when it needs a new chunk and the shared memory buffer has none
 * free, as upstream's {@code BufferExhaustedPolicy}. Set per data source.
 */
public enum BufferExhaustedPolicy {
  /**
   * Wait (sleeping with backoff) until the service frees a chunk. Nothing is lost while the
   * service keeps draining; a writer stops waiting and drops only when the connection is gone.
   */
  STALL,
  /**
   * Write into a scratch chunk that is thrown away; the service sees the loss (a drop-marked
   * fragment, then {@code previous_packet_dropped} on the next packet that makes it). The default.
   * Before it starts dropping, a writer waits for the producer's drop grace (1 ms unless
   * {@code TracingProducer.Builder.dropGrace} says otherwise) for the service to free a chunk;
   * while dropping it does not wait again.
   */
  DROP,
  /**
   * Stall for a bounded time, then drop; once dropping, later chunk requests drop at once until a
   * chunk is acquired again.
   */
  STALL_THEN_DROP
}
