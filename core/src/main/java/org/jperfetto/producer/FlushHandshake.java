package org.jperfetto.producer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Who may touch a {@link TraceWriter}'s state while a flush wants its current chunk committed: the
 * writer's own thread, or the flushing (producer) thread while the writer sits between packets.
 *
 * <p>Two words. {@code busy} is written only by the writer's thread: 1 from the moment it enters
 * the writer (packet begin, flush, close) until it leaves it (packet end), 0 otherwise. {@code
 * claim} is the flush request: {@link #NONE}, {@link #REQUESTED}, or owned for the commit by
 * {@link #FLUSHER} or {@link #WRITER}; it changes by CAS except for the owner's release back to
 * NONE. NONE after a request therefore always means the chunk the writer held was committed.
 *
 * <p>The writer's side per packet is an opaque store of busy, an acquire load of claim and a
 * release store of busy: plain moves on x86, no lock and no StoreLoad fence. Entering is a store
 * followed by a load, and so is the flusher's side (claim, then busy): a Dekker handshake, which
 * needs a StoreLoad barrier on both sides. The flusher supplies both with one membarrier(2)
 * (PRIVATE_EXPEDITED) between its claim store and its busy loads: every CPU running a writer passes
 * a full barrier, so a writer either published busy=1 before it, or loads claim after it and sees
 * the request. The writer's store and load are VarHandle accesses with an ordering mode, which C2
 * keeps in program order (each is bracketed by a CPU-order barrier), so only the hardware could
 * reorder them, and that is what the membarrier rules out. Without membarrier the flusher never
 * takes a writer: it only asks, and the writer answers when it next enters.
 */
final class FlushHandshake {
  static final int NONE = 0;
  static final int REQUESTED = 1;
  static final int FLUSHER = 2;
  static final int WRITER = 3;

  private static final VarHandle BUSY;
  private static final VarHandle CLAIM;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      BUSY = l.findVarHandle(FlushHandshake.class, "busy", int.class).withInvokeExactBehavior();
      CLAIM = l.findVarHandle(FlushHandshake.class, "claim", int.class).withInvokeExactBehavior();
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // through BUSY
  private int busy;
  @SuppressWarnings("unused") // through CLAIM
  private int claim;

  // ---- the writer's thread ----

  /**
   * The writer's thread is about to touch the writer: mark it busy, and if a flush asked, commit
   * the current chunk first (or wait while the flusher is doing it).
   */
  void enter(TraceWriter writer) {
    BUSY.setOpaque(this, 1);
    if ((int) CLAIM.getAcquire(this) != NONE) {
      answer(writer);
    }
  }

  /** The writer's thread is done with the writer (between packets): the flusher may take it. */
  void exit() {
    BUSY.setRelease(this, 0);
  }

  private void answer(TraceWriter writer) {
    for (;;) {
      int c = (int) CLAIM.getAcquire(this);
      if (c == NONE) {
        return;
      }
      if (c == REQUESTED && CLAIM.compareAndSet(this, REQUESTED, WRITER)) {
        commit(writer);
        return;
      }
      Thread.onSpinWait(); // the flusher is completing the chunk: a few microseconds
    }
  }

  // ---- the flushing thread ----

  /** Asks for the current chunk (joins a request already pending). */
  void request() {
    CLAIM.compareAndSet(this, NONE, REQUESTED);
  }

  /**
   * Whether the request is answered, completing the chunk here when the writer is between packets
   * and {@code mayTake} (the process passed a membarrier after {@link #request()}).
   */
  boolean tryAnswer(TraceWriter writer, boolean mayTake) {
    int c = (int) CLAIM.getAcquire(this);
    if (c == NONE) {
      return true;
    }
    if (!mayTake || c != REQUESTED || (int) BUSY.getAcquire(this) != 0
        || !CLAIM.compareAndSet(this, REQUESTED, FLUSHER)) {
      return false;
    }
    commit(writer);
    return true;
  }

  /** Whether the writer's thread is inside the writer (for tests and diagnostics). */
  boolean isBusy() {
    return (int) BUSY.getOpaque(this) != 0;
  }

  int claim() {
    return (int) CLAIM.getAcquire(this);
  }

  private void commit(TraceWriter writer) {
    try {
      writer.commitChunkForFlush();
    } finally {
      CLAIM.setRelease(this, NONE);
    }
  }
}
