package org.jperfetto.consumer;

/**
 * The {@code flags} of a FlushRequest: who asked for the flush and why, packed as upstream packs
 * them (reason in bits 0-3, initiator in bits 4-7, clone target in bits 8-11).
 *
 * @param bits the packed value sent on the wire
 */
public record FlushFlags(long bits) {
  /** Who asks for a flush (values are upstream's). */
  public enum Initiator {
    /** Not said. */
    UNKNOWN,
    /** The tracing service itself (periodic flushes, stop). */
    TRACED,
    /** The command line ({@code perfetto} or {@code jperfetto}). */
    PERFETTO_CMD,
    /** An application's own consumer, such as the in-process backend. */
    CONSUMER_SDK
  }

  /** Why (values are upstream's). */
  public enum Reason {
    /** Not said. */
    UNKNOWN,
    /** The config's flush_period_ms. */
    PERIODIC,
    /** The last flush before a session stops. */
    TRACE_STOP,
    /** A session being cloned. */
    TRACE_CLONE,
    /** Asked for by the consumer. */
    EXPLICIT
  }

  static final int REASON_SHIFT = 0;
  static final int INITIATOR_SHIFT = 4;
  static final long FIELD_MASK = 0xF;

  /** No flags: the service treats the flush as of unknown origin. */
  public static final FlushFlags NONE = new FlushFlags(0);

  /** What the command line sends when it stops a session. */
  public static final FlushFlags CMD_TRACE_STOP = of(Initiator.PERFETTO_CMD, Reason.TRACE_STOP);

  /** The flags for a flush initiator asks for, for reason. */
  public static FlushFlags of(Initiator initiator, Reason reason) {
    return new FlushFlags(((long) initiator.ordinal() << INITIATOR_SHIFT)
        | ((long) reason.ordinal() << REASON_SHIFT));
  }

  /** Who asked; {@link Initiator#UNKNOWN} for a value this version does not know. */
  public Initiator initiator() {
    int v = (int) ((bits >>> INITIATOR_SHIFT) & FIELD_MASK);
    return v < Initiator.values().length ? Initiator.values()[v] : Initiator.UNKNOWN;
  }

  /** Why; {@link Reason#UNKNOWN} for a value this version does not know. */
  public Reason reason() {
    int v = (int) ((bits >>> REASON_SHIFT) & FIELD_MASK);
    return v < Reason.values().length ? Reason.values()[v] : Reason.UNKNOWN;
  }
}
