package org.jperfetto.producer;

import java.util.List;
import java.util.function.BooleanSupplier;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Membarrier;

/**
 * One flush request's pass over the writers it covers: each writer's current chunk is committed
 * (queued in chunks_to_move with its patches) before the request is acked.
 *
 * <p>Guarantee, with membarrier: a writer between packets when the flush arrives has its chunk
 * completed by the flushing thread at the first {@link #poll()}; a writer in the middle of a packet
 * commits its chunk itself when it next enters the writer, or the flusher takes it as soon as the
 * packet ends. The caller polls until everything is answered or its deadline passes; what a writer
 * still holds after that (a packet left open, a thread stalled for chunks) is left to the service's
 * scrape, as before, and committed at the writer's next packet. Without membarrier (old kernel,
 * seccomp) the flusher only asks: {@link #poll()} reports done at once, writers commit at their next
 * packet, and idle writers' chunks reach the service through its scrape.
 *
 * <p>See {@link FlushHandshake} for the ordering argument. Producer thread only.
 */
final class WriterFlush {
  private static final System.Logger LOG = System.getLogger(WriterFlush.class.getName());

  private final TraceWriter[] pending;
  private int remaining;
  private final boolean mayTake;

  WriterFlush(List<TraceWriter> writers, BooleanSupplier processBarrier) {
    pending = writers.toArray(new TraceWriter[0]);
    remaining = pending.length;
    for (TraceWriter w : pending) {
      w.handshake.request();
    }
    // One barrier for all writers, after every request is visible.
    mayTake = remaining > 0 && processBarrier.getAsBoolean();
  }

  /**
   * Commits the chunks of writers between packets and drops the answered ones; true when every
   * writer's request is answered, or when idle writers cannot be taken (no process barrier).
   */
  boolean poll() {
    int kept = 0;
    for (int i = 0; i < remaining; i++) {
      TraceWriter w = pending[i];
      if (!w.handshake.tryAnswer(w, mayTake)) {
        pending[kept++] = w;
      }
    }
    for (int i = kept; i < remaining; i++) {
      pending[i] = null;
    }
    remaining = kept;
    return remaining == 0 || !mayTake;
  }

  /** Writers whose chunk is not committed yet. */
  int remaining() {
    return remaining;
  }

  /** Whether this pass could take idle writers (the process barrier ran). */
  boolean tookIdleWriters() {
    return mayTake;
  }

  /** The default process barrier: membarrier(2), false when unavailable or refused. */
  static boolean membarrier() {
    if (!Membarrier.isAvailable()) {
      return false;
    }
    try {
      Membarrier.run();
      return true;
    } catch (ErrnoException e) {
      LOG.log(System.Logger.Level.WARNING, "flush: " + e.getMessage()
          + "; idle writers' chunks are left to the service's scrape");
      return false;
    }
  }
}
