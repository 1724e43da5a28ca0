package org.jperfetto.service.buffer;

/** What a {@link TraceBuffer} does when a new chunk would overwrite chunks not read yet. */
public enum OverwritePolicy {
  /** Ring buffer (upstream kOverwrite, TraceConfig RING_BUFFER): the oldest chunks are overwritten. */
  RING_BUFFER,
  /**
   * Upstream kDiscard (TraceConfig DISCARD): the first chunk that would overwrite unread data is
   * discarded, and so is every later new chunk, even after the reader catches up.
   */
  DISCARD
}
