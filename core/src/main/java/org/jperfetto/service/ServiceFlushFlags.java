package org.jperfetto.service;

/**
 * The FlushRequest / Flush command {@code flags} the service itself sends, packed as upstream
 * packs them: reason in bits 0-3, initiator in bits 4-7, clone target in bits 8-11. A consumer's
 * own flags are passed to the producers unchanged.
 */
final class ServiceFlushFlags {
  private ServiceFlushFlags() {}

  private static final int INITIATOR_SHIFT = 4;
  /** Initiator kTraced. */
  private static final long TRACED = 1L << INITIATOR_SHIFT;
  /** Reasons (values are upstream's). */
  private static final long REASON_PERIODIC = 1;
  private static final long REASON_TRACE_STOP = 2;
  private static final long REASON_TRACE_CLONE = 3;

  /** flush_period_ms flushes and the flushes before write_into_file drains. */
  static final long PERIODIC = TRACED | REASON_PERIODIC;
  /** The flush before a session stops (duration_ms, triggers). */
  static final long TRACE_STOP = TRACED | REASON_TRACE_STOP;
  /** The flush before a session is cloned. */
  static final long TRACE_CLONE = TRACED | REASON_TRACE_CLONE;
}
