package org.jperfetto.service;

/**
 * Where one read of a session stands between its batches: the read goes one batch at a time, so
 * a consumer whose socket drains slowly holds the service to about one batch of its trace in
 * memory, not the whole buffer. The service's head packets go first, then the buffers in order
 * (each resumed where the previous batch left it: a buffer's read position survives writes,
 * which only make it start over among the packets not yet read), then the tail packets.
 * Service thread only.
 */
final class SessionReadCursor {
  final ServiceSession session;
  /** Where the batches go: the consumer, the trace file, or a compressor before either. */
  final SliceSink out;
  final SliceBatch batch = new SliceBatch();
  boolean headDone;
  /** The buffer (index into the session's bufferIds) being read. */
  int bufferIndex;
  /** Whether beginRead was called on that buffer. */
  boolean bufferBegun;
  /** True once the last batch (hasMore false) went out. */
  boolean finished;

  SessionReadCursor(ServiceSession session, SliceSink out) {
    this.session = session;
    this.out = out;
  }
}
