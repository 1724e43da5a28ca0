package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jperfetto.os.Clocks;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.service.ClockSource;
import org.junit.jupiter.api.Test;

/** clock_gettime clocks agree with what the JDK and the kernel say. */
class PosixClockSourceTest {
  @Test
  void snapshotHasTheFourClocksBoottimeFirst() {
    PosixClockSource clocks = new PosixClockSource();
    List<ClockSource.Reading> s = clocks.snapshot();
    assertEquals(List.of(ClockSource.BUILTIN_CLOCK_BOOTTIME, ClockSource.BUILTIN_CLOCK_MONOTONIC,
        ClockSource.BUILTIN_CLOCK_MONOTONIC_RAW, ClockSource.BUILTIN_CLOCK_REALTIME),
        s.stream().map(ClockSource.Reading::clockId).toList());
    assertEquals(ClockSource.BUILTIN_CLOCK_BOOTTIME, clocks.traceClockId());
    // BOOTTIME counts suspend on top of MONOTONIC, so it is never behind it
    assertTrue(s.get(0).timestampNs() >= s.get(1).timestampNs() - 1_000_000);
    long wallNs = System.currentTimeMillis() * 1_000_000L;
    assertTrue(Math.abs(s.get(3).timestampNs() - wallNs) < 5_000_000_000L, "REALTIME near the wall clock");
    long a = clocks.now();
    long b = clocks.now();
    assertTrue(b >= a);
  }

  @Test
  void monotonicMatchesNanoTime() throws Exception {
    long before = System.nanoTime();
    long mono = Clocks.nanos(Clocks.CLOCK_MONOTONIC);
    long after = System.nanoTime();
    assertTrue(mono >= before && mono <= after, before + " <= " + mono + " <= " + after);
  }

  @Test
  void unknownClockIsAnErrnoException() {
    ErrnoException e = assertThrows(ErrnoException.class, () -> Clocks.nanos(12345));
    assertEquals("EINVAL", e.errnoName());
    assertTrue(e.getMessage().contains("clock 12345"), e.getMessage());
  }
}
