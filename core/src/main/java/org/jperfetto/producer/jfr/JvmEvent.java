package org.jperfetto.producer.jfr;

import java.util.List;

/**
 * What one JFR event becomes in the trace, before it is written: the bridge's small intermediate
 * model, so the mapping from JFR is a pure function that tests can check without a session.
 * Times are JFR's own, in nanoseconds since the epoch ({@link JfrClock} moves them onto the trace
 * clock when they are written).
 */
sealed interface JvmEvent permits JvmEvent.Slice, JvmEvent.Instant, JvmEvent.Counter {

  /** JFR start time, nanoseconds since the epoch. */
  long epochNanos();

  /**
   * Where a slice or instant goes: a lane (track) of an OS thread, or of the process when JFR names
   * no thread (tid 0).
   *
   * @param tid Linux tid (JFR's osThreadId), or 0 for the process
   * @param threadName the thread's name, or "" when unknown
   * @param lane the track's name under the thread or process, e.g. "GC", "Locks"
   */
  record Lane(long tid, String threadName, String lane) {
    /** Whether the event belongs on a thread's track (a Linux tid is known). */
    public boolean isThread() {
      return tid > 0;
    }
  }

  /** A debug annotation: name and a long, double, boolean or String value. */
  record Arg(String name, Object value) {
    /** Refuses a value of another type. */
    public Arg {
      if (!(value instanceof Long || value instanceof Double || value instanceof Boolean || value instanceof String)) {
        throw new IllegalArgumentException("debug annotation " + name + ": unsupported value " + value);
      }
    }
  }

  /** An event with a duration: begin and end on one track. */
  record Slice(long epochNanos, long durationNanos, Lane lane, String category, String name,
      List<Arg> args, List<String> stack) implements JvmEvent {
    /** Copies the lists (the record is immutable). */
    public Slice {
      args = List.copyOf(args);
      stack = List.copyOf(stack);
    }

    /** When the slice ended, in epoch nanoseconds. */
    public long endEpochNanos() {
      return epochNanos + durationNanos;
    }
  }

  /** An event without a duration. */
  record Instant(long epochNanos, Lane lane, String category, String name, List<Arg> args,
      List<String> stack) implements JvmEvent {
    /** Copies the lists (the record is immutable). */
    public Instant {
      args = List.copyOf(args);
      stack = List.copyOf(stack);
    }
  }

  /**
   * A sample on a process counter track.
   *
   * @param track the counter track's name, e.g. "JVM heap used"
   * @param unit the unit shown with it ("bytes", "%", "count")
   */
  record Counter(long epochNanos, String track, String unit, double value) implements JvmEvent {}
}
