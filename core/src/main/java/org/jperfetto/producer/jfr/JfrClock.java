package org.jperfetto.producer.jfr;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * Moves JFR's timestamps onto the producer's trace clock, CLOCK_MONOTONIC (System.nanoTime).
 *
 * <p>The method. On Linux HotSpot stamps JFR events with ticks of CLOCK_MONOTONIC, and a
 * RecordedEvent's start time is those ticks shifted by an anchor JFR takes at the start of each
 * recording chunk (the wall clock and the ticks read together). Inside a chunk, JFR time minus
 * CLOCK_MONOTONIC is therefore a constant. We measure that constant through JFR's own conversion,
 * not through {@code Instant.now()} (the wall clock may have been slewed since JFR took its anchor):
 * a {@link ClockMark} event is committed between two System.nanoTime() reads {@code before} and
 * {@code after}; when it comes back, its JFR start time {@code j} gives
 * {@code offset in [j - after, j - before]}. The bracket is a few tens of nanoseconds wide; its middle
 * is used, so a converted time is within half the bracket of the truth, and durations (end minus
 * start, one offset) are JFR's own to the nanosecond.
 *
 * <p>Drift. A new mark is committed at every JFR flush (about once a second). If its bracket
 * overlaps the current one (widened by {@link #TOLERANCE_NANOS}) the tighter of the two is kept;
 * if not, the anchor moved (a new chunk after a wall-clock step, or a tick source that is not
 * CLOCK_MONOTONIC): the new offset is adopted and the step counted and logged.
 *
 * <p>Not thread-safe: used by the one thread that reads the recording stream.
 */
final class JfrClock {
  private static final Logger LOG = System.getLogger(JfrClock.class.getName());
  /** A new mark that differs by more than this (beyond both brackets) is a step. */
  static final long TOLERANCE_NANOS = 1_000;

  private boolean calibrated;
  private long low;
  private long high;
  private long steps;
  private long marks;
  private long largestStep;

  /** Feeds one mark: JFR start time of the mark (epoch ns) and the two monotonic reads around it. */
  public void mark(long jfrEpochNanos, long monotonicBefore, long monotonicAfter) {
    if (monotonicAfter < monotonicBefore) {
      throw new IllegalArgumentException("clock mark brackets backwards: before=" + monotonicBefore
          + " after=" + monotonicAfter);
    }
    long newLow = jfrEpochNanos - monotonicAfter;
    long newHigh = jfrEpochNanos - monotonicBefore;
    marks++;
    if (!calibrated) {
      low = newLow;
      high = newHigh;
      calibrated = true;
      return;
    }
    if (newHigh + TOLERANCE_NANOS < low || newLow - TOLERANCE_NANOS > high) {
      long step = mid(newLow, newHigh) - offset();
      steps++;
      largestStep = Math.max(largestStep, Math.abs(step));
      LOG.log(Level.INFO, "jvm.jfr: JFR clock moved against CLOCK_MONOTONIC by " + step + " ns; re-anchored");
      low = newLow;
      high = newHigh;
    } else if (newHigh - newLow < high - low) {
      low = newLow;
      high = newHigh;
    }
  }

  /** Whether a mark came back, so {@link #toTrace} can be used. */
  public boolean isCalibrated() {
    return calibrated;
  }

  /** JFR time minus CLOCK_MONOTONIC, nanoseconds. */
  public long offset() {
    return mid(low, high);
  }

  /** Half the width of the bracket the offset lies in: the conversion's error bound. */
  public long uncertaintyNanos() {
    return (high - low + 1) / 2;
  }

  /** A JFR time (epoch ns) on CLOCK_MONOTONIC. */
  public long toTrace(long jfrEpochNanos) {
    if (!calibrated) {
      throw new IllegalStateException("jvm.jfr clock not calibrated: no clock mark seen yet");
    }
    return jfrEpochNanos - offset();
  }

  /** How many clock marks were taken. */
  public long marks() {
    return marks;
  }

  /** Times the offset moved beyond the brackets (should stay 0). */
  public long steps() {
    return steps;
  }

  /** The largest move of the offset beyond the brackets, in nanoseconds. */
  public long largestStepNanos() {
    return largestStep;
  }

  private static long mid(long a, long b) {
    return a + (b - a) / 2;
  }
}
