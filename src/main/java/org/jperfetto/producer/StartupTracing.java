package org.jperfetto.producer;

import java.util.HashMap;
import java.util.Map;
import org.jperfetto.protos.DataSourceConfig;

/**
 * Startup tracing's bookkeeping on the producer's own SMB (upstream's target buffer reservations):
 * data sources started before the service knows of them write with a placeholder target buffer,
 * {@code reservation << 16}; their commits and writer registrations are held back until the
 * service starts a matching data source, whose real target buffer then replaces the placeholder
 * (binding), or until startup tracing is aborted (bound to buffer 0, which the service discards
 * and frees).
 *
 * <p>Sits between the SMB's arbiter and the connection as the arbiter's {@link
 * SharedMemoryArbiter.CommitSink}: before a connection exists, nothing goes anywhere.
 */
final class StartupTracing implements SharedMemoryArbiter.CommitSink {
  /** Placeholder bound to this: the service has no buffer 0, so it drops the chunks and frees them. */
  static final int ABORTED = 0;
  private static final int UNBOUND = -1;

  private final Object lock = new Object();
  /** placeholder target -> bound target buffer, or UNBOUND. Guarded by lock. */
  private final Map<Integer, Integer> reservations = new HashMap<>();
  /** Writers created with a placeholder, not yet registered: writer id -> placeholder. Guarded by lock. */
  private final Map<Integer, Integer> deferredWriters = new HashMap<>();
  /** Commit entries of unbound placeholders, oldest first. Guarded by lock. */
  private CommitBatch held = new CommitBatch();
  private int lastReservation;
  private volatile SharedMemoryArbiter.CommitSink connection;

  static boolean isPlaceholder(int targetBuffer) {
    return (targetBuffer >>> 16) != 0;
  }

  /** A new unbound reservation; its placeholder target buffer. */
  int reserve() {
    synchronized (lock) {
      int id = ++lastReservation;
      if (id > 0xFFFF) {
        throw new IllegalStateException("startup target buffer reservations exhausted: " + id);
      }
      int placeholder = id << 16;
      reservations.put(placeholder, UNBOUND);
      return placeholder;
    }
  }

  /** Where commits and registrations go from now on (the connection that adopted the SMB). */
  void connect(SharedMemoryArbiter.CommitSink sink) {
    connection = sink;
  }

  /**
   * Binds placeholder to targetBuffer ({@link #ABORTED} to drop what it holds); the writers created
   * for it are registered now. Returns false if it was bound already.
   */
  boolean bind(int placeholder, int targetBuffer) {
    Map<Integer, Integer> toRegister = new HashMap<>();
    synchronized (lock) {
      Integer was = reservations.get(placeholder);
      if (was == null || was != UNBOUND) {
        return false;
      }
      reservations.put(placeholder, targetBuffer);
      deferredWriters.entrySet().removeIf(e -> {
        if (e.getValue() == placeholder) {
          toRegister.put(e.getKey(), targetBuffer);
          return true;
        }
        return false;
      });
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null && targetBuffer != ABORTED) {
      toRegister.forEach(c::registerTraceWriter);
    }
    return true;
  }

  /** Whether placeholder is still waiting for its session. */
  boolean isUnbound(int placeholder) {
    synchronized (lock) {
      Integer t = reservations.get(placeholder);
      return t != null && t == UNBOUND;
    }
  }

  @Override
  public void commitPending() {
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null) {
      c.commitPending();
    }
  }

  @Override
  public void registerTraceWriter(int writerId, int targetBuffer) {
    int target = targetBuffer;
    synchronized (lock) {
      if (isPlaceholder(targetBuffer)) {
        Integer bound = reservations.get(targetBuffer);
        if (bound == null || bound == UNBOUND) {
          deferredWriters.put(writerId, targetBuffer);
          return;
        }
        target = bound;
      }
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null && target != ABORTED) {
      c.registerTraceWriter(writerId, target);
    }
  }

  @Override
  public void unregisterTraceWriter(int writerId) {
    synchronized (lock) {
      if (deferredWriters.remove(writerId) != null) {
        return; // never registered
      }
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null) {
      c.unregisterTraceWriter(writerId);
    }
  }

  /**
   * Rewrites batch (just drained from the arbiter) for sending: entries held before whose
   * placeholder is bound now go first, bound placeholders become their target buffers, and
   * entries of unbound placeholders are held back. The flush ack stays in batch.
   */
  void resolve(CommitBatch batch) {
    synchronized (lock) {
      if (held.moves == 0 && held.patches == 0 && !hasPlaceholder(batch)) {
        return;
      }
      CommitBatch out = new CommitBatch();
      CommitBatch stillHeld = new CommitBatch();
      split(held, out, stillHeld);
      split(batch, out, stillHeld);
      long flushAck = batch.flushRequestId;
      held = stillHeld;
      batch.clear();
      batch.appendFrom(out);
      batch.flushRequestId = flushAck;
    }
  }

  private static boolean hasPlaceholder(CommitBatch b) {
    for (int i = 0; i < b.moves; i++) {
      if (isPlaceholder(b.moveTargetBuffer[i])) {
        return true;
      }
    }
    for (int i = 0; i < b.patches; i++) {
      if (isPlaceholder(b.patchTargetBuffer[i])) {
        return true;
      }
    }
    return false;
  }

  /** Entries of from go to send (placeholders replaced) or, if unbound, to hold. Lock held. */
  private void split(CommitBatch from, CommitBatch send, CommitBatch hold) {
    for (int i = 0; i < from.moves; i++) {
      int t = from.moveTargetBuffer[i];
      int bound = isPlaceholder(t) ? reservations.getOrDefault(t, ABORTED) : t;
      CommitBatch to = bound == UNBOUND ? hold : send;
      to.addMove(from.movePage[i], from.moveChunk[i], bound == UNBOUND ? t : bound, 0);
    }
    for (int i = 0; i < from.patches; i++) {
      int t = from.patchTargetBuffer[i];
      int bound = isPlaceholder(t) ? reservations.getOrDefault(t, ABORTED) : t;
      CommitBatch to = bound == UNBOUND ? hold : send;
      to.addPatch(from.patchWriterId[i], from.patchChunkId[i], bound == UNBOUND ? t : bound,
          from.patchOffset[i], from.patchData[i]);
      to.patchHasMore[to.patches - 1] = from.patchHasMore[i];
    }
  }

  /**
   * Whether a service session's data source config asks for what a startup instance traces: the
   * same config once the fields the service fills in are left out.
   */
  static boolean sameRequest(DataSourceConfig startup, DataSourceConfig fromService) {
    return comparable(startup).equals(comparable(fromService));
  }

  private static DataSourceConfig comparable(DataSourceConfig c) {
    return c.toBuilder().clearTargetBuffer().clearTracingSessionId().clearTraceDurationMs()
        .clearStopTimeoutMs().clearEnableExtraGuardrails().clearPreferSuspendClockForDuration()
        .clearSessionInitiator().build();
  }
}
