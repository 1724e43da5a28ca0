package org.jperfetto.service.ipc;

import java.util.List;
import org.jperfetto.os.Clocks;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.service.ClockSource;

/**
 * The clocks of a real daemon, read with clock_gettime: BOOTTIME (the trace clock, as upstream's
 * default), MONOTONIC, MONOTONIC_RAW and REALTIME.
 */
public final class PosixClockSource implements ClockSource {
  private static final int[][] CLOCKS = {
    {BUILTIN_CLOCK_BOOTTIME, Clocks.CLOCK_BOOTTIME},
    {BUILTIN_CLOCK_MONOTONIC, Clocks.CLOCK_MONOTONIC},
    {BUILTIN_CLOCK_MONOTONIC_RAW, Clocks.CLOCK_MONOTONIC_RAW},
    {BUILTIN_CLOCK_REALTIME, Clocks.CLOCK_REALTIME},
  };

  @Override
  public List<Reading> snapshot() {
    Reading[] out = new Reading[CLOCKS.length];
    for (int i = 0; i < CLOCKS.length; i++) {
      out[i] = new Reading(CLOCKS[i][0], read(CLOCKS[i][1]));
    }
    return List.of(out);
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
