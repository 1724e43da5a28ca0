package org.jperfetto.service.ipc;

import java.util.List;
import org.jperfetto.os.Clocks;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.service.ClockSource;

/**
 * The clocks of a real daemon, read with clock_gettime: BOOTTIME (the trace clock, as upstream's
 * default), then the clocks upstream's traced snapshots with it: REALTIME_COARSE, MONOTONIC_COARSE,
 * REALTIME, MONOTONIC, MONOTONIC_RAW. (traced also records the x86 TSC, clock 9, which pure Java
 * cannot read.)
 *
 * <p>A snapshot says which value every clock had at one instant, and whatever time passes between
 * two reads becomes an error in every timestamp converted through it. Reads one after another do
 * not bound that time (a snapshot is taken rarely, through cold code, and the thread can be
 * preempted between two reads), so each clock is read between two BOOTTIME reads, several times,
 * and the tightest bracket wins: its value is moved to the snapshot's BOOTTIME instant by the
 * distance from the bracket's middle (the clocks advance at the same rate over microseconds). The
 * error left is at most half the bracket, {@link #lastSkewNs()}.
 */
public final class PosixClockSource implements ClockSource {
  private static final int[][] CLOCKS = {
    {BUILTIN_CLOCK_REALTIME_COARSE, Clocks.CLOCK_REALTIME_COARSE},
    {BUILTIN_CLOCK_MONOTONIC_COARSE, Clocks.CLOCK_MONOTONIC_COARSE},
    {BUILTIN_CLOCK_REALTIME, Clocks.CLOCK_REALTIME},
    {BUILTIN_CLOCK_MONOTONIC, Clocks.CLOCK_MONOTONIC},
    {BUILTIN_CLOCK_MONOTONIC_RAW, Clocks.CLOCK_MONOTONIC_RAW},
  };
  /** Brackets tried per clock at most. */
  static final int MAX_ROUNDS = 32;
  /** A bracket this tight ends the search for its clock (a few clock_gettime calls, compiled). */
  static final long GOOD_BRACKET_NS = 250;

  private volatile long lastSkewNs;

  @Override
  public List<Reading> snapshot() {
    Reading[] out = new Reading[CLOCKS.length + 1];
    long boot = read(Clocks.CLOCK_BOOTTIME);
    out[0] = new Reading(BUILTIN_CLOCK_BOOTTIME, boot);
    long worst = 0;
    for (int i = 0; i < CLOCKS.length; i++) {
      long bestWidth = Long.MAX_VALUE;
      long value = 0;
      for (int round = 0; round < MAX_ROUNDS && bestWidth > GOOD_BRACKET_NS; round++) {
        long before = read(Clocks.CLOCK_BOOTTIME);
        long v = read(CLOCKS[i][1]);
        long after = read(Clocks.CLOCK_BOOTTIME);
        long width = after - before;
        if (width < bestWidth) {
          bestWidth = width;
          value = v + (boot - (before + width / 2));
        }
      }
      worst = Math.max(worst, bestWidth);
      out[i + 1] = new Reading(CLOCKS[i][0], value);
    }
    lastSkewNs = (worst + 1) / 2;
    return List.of(out);
  }

  /**
   * The most a clock of the last {@link #snapshot()} can be off from the snapshot's BOOTTIME
   * instant: half the widest of the brackets it kept, in ns.
   */
  public long lastSkewNs() {
    return lastSkewNs;
  }

  @Override
  public int traceClockId() {
    return BUILTIN_CLOCK_BOOTTIME;
  }

  @Override
  public long now() {
    return read(Clocks.CLOCK_BOOTTIME);
  }

  private static long read(int posixClock) {
    try {
      return Clocks.nanos(posixClock);
    } catch (ErrnoException e) {
      // Every clock above exists since Linux 2.6.39; a failure means a broken libc/seccomp.
      throw new IllegalStateException(e.getMessage(), e);
    }
  }
}
