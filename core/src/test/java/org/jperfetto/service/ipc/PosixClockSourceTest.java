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
  void snapshotHasTracedsClocksBoottimeFirst() {
    PosixClockSource clocks = new PosixClockSource();
    List<ClockSource.Reading> s = clocks.snapshot();
    // The set and order of upstream traced's CaptureClockSnapshots (less the x86 TSC).
    assertEquals(List.of(ClockSource.BUILTIN_CLOCK_BOOTTIME, ClockSource.BUILTIN_CLOCK_REALTIME_COARSE,
        ClockSource.BUILTIN_CLOCK_MONOTONIC_COARSE, ClockSource.BUILTIN_CLOCK_REALTIME,
        ClockSource.BUILTIN_CLOCK_MONOTONIC, ClockSource.BUILTIN_CLOCK_MONOTONIC_RAW),
        s.stream().map(ClockSource.Reading::clockId).toList());
    assertEquals(ClockSource.BUILTIN_CLOCK_BOOTTIME, clocks.traceClockId());
    // BOOTTIME counts suspend on top of MONOTONIC, so it is never behind it
    assertTrue(s.get(0).timestampNs() >= value(s, ClockSource.BUILTIN_CLOCK_MONOTONIC) - 1_000_000);
    long wallNs = System.currentTimeMillis() * 1_000_000L;
    assertTrue(Math.abs(value(s, ClockSource.BUILTIN_CLOCK_REALTIME) - wallNs) < 5_000_000_000L,
        "REALTIME near the wall clock");
    // A coarse clock is within a few ticks (jiffies: 1-10 ms) of its fine twin.
    assertTrue(Math.abs(value(s, ClockSource.BUILTIN_CLOCK_MONOTONIC_COARSE)
        - value(s, ClockSource.BUILTIN_CLOCK_MONOTONIC)) < 50_000_000L);
    long a = clocks.now();
    long b = clocks.now();
    assertTrue(b >= a);
  }

  private static long value(List<ClockSource.Reading> s, int clockId) {
    return s.stream().filter(r -> r.clockId() == clockId).findFirst().orElseThrow().timestampNs();
  }

  /**
   * The kernel's own BOOTTIME - MONOTONIC, bounded from both sides: BOOTTIME read after MONOTONIC
   * overstates it by the time between the reads, read before understates it; the tightest pair of
   * bounds over many warm reads is the truth to within its width.
   */
  private static long[] kernelOffset() throws Exception {
    long upper = Long.MAX_VALUE;
    long lower = Long.MIN_VALUE;
    for (int i = 0; i < 200_000; i++) {
      long m = Clocks.nanos(Clocks.CLOCK_MONOTONIC);
      long b = Clocks.nanos(Clocks.CLOCK_BOOTTIME);
      upper = Math.min(upper, b - m);
      long b2 = Clocks.nanos(Clocks.CLOCK_BOOTTIME);
      long m2 = Clocks.nanos(Clocks.CLOCK_MONOTONIC);
      lower = Math.max(lower, b2 - m2);
    }
    return new long[] {lower, upper};
  }

  @Test
  void snapshotsAreWithinAMicrosecondOfTheKernelsOffsetOnABusyMachine() throws Exception {
    // The first snapshot of a fresh clock source in this JVM: possibly cold code.
    PosixClockSource clocks = new PosixClockSource();
    List<ClockSource.Reading> first = clocks.snapshot();
    long firstSkew = clocks.lastSkewNs();
    // Every core busy, as a tracing machine under load would be.
    int busy = Runtime.getRuntime().availableProcessors();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    List<Thread> spinners = new java.util.ArrayList<>();
    for (int i = 0; i < busy; i++) {
      spinners.add(Thread.ofPlatform().daemon().start(() -> {
        long x = 0;
        while (!stop.get()) {
          x += System.nanoTime() & 1;
        }
      }));
    }
    try {
      long[] truth = kernelOffset();
      assertTrue(truth[1] - truth[0] < 2_000, "the kernel's offset bracketed to " + (truth[1] - truth[0]) + " ns");
      long mid = (truth[0] + truth[1]) / 2;
      long firstError = Math.abs(first.get(0).timestampNs() - value(first, ClockSource.BUILTIN_CLOCK_MONOTONIC) - mid);
      assertTrue(firstError <= 5_000, "first snapshot off by " + firstError + " ns (skew bound " + firstSkew + ")");
      long worst = 0;
      long[] errors = new long[200];
      for (int i = 0; i < errors.length; i++) {
        List<ClockSource.Reading> s = clocks.snapshot();
        errors[i] = Math.abs(s.get(0).timestampNs() - value(s, ClockSource.BUILTIN_CLOCK_MONOTONIC) - mid);
        worst = Math.max(worst, errors[i]);
        assertTrue(errors[i] <= clocks.lastSkewNs() + (truth[1] - truth[0]),
            "error " + errors[i] + " ns beyond the snapshot's own bound " + clocks.lastSkewNs());
      }
      java.util.Arrays.sort(errors);
      long median = errors[errors.length / 2];
      assertTrue(median <= 1_000, "median error " + median + " ns");
      assertTrue(worst <= 3_000, "worst error " + worst + " ns");
      System.out.println("clock snapshot vs kernel BOOTTIME-MONOTONIC: first " + firstError + " ns, median "
          + median + " ns, worst " + worst + " ns (kernel offset bracketed to " + (truth[1] - truth[0]) + " ns)");
    } finally {
      stop.set(true);
      for (Thread t : spinners) {
        t.join();
      }
    }
  }

  /** Prints the BOOTTIME - MONOTONIC of the first snapshot of a JVM, and its skew bound. */
  public static final class FirstSnapshotMain {
    public static void main(String[] args) {
      PosixClockSource clocks = new PosixClockSource();
      List<ClockSource.Reading> s = clocks.snapshot();
      System.out.println((s.get(0).timestampNs() - value(s, ClockSource.BUILTIN_CLOCK_MONOTONIC)) + " "
          + clocks.lastSkewNs());
    }
  }

  @Test
  void theFirstSnapshotOfAnInterpretedJvmIsStillWithinItsBound() throws Exception {
    // -Xint: every clock read runs in the interpreter, microseconds apart: the cold path at its
    // slowest. Read one after the other, the clocks of such a snapshot were ~10 us apart.
    Process child = new ProcessBuilder(org.jperfetto.testing.ChildJvm.command(List.of("-Xint"),
        System.getProperty("java.class.path"), FirstSnapshotMain.class.getName()))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(child.getInputStream().readAllBytes()).trim();
    assertTrue(child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(0, child.exitValue(), out);
    long[] truth = kernelOffset();
    long mid = (truth[0] + truth[1]) / 2;
    String[] parts = out.split(" ");
    long error = Math.abs(Long.parseLong(parts[0]) - mid);
    long bound = Long.parseLong(parts[1]);
    System.out.println("first snapshot of an -Xint JVM: off by " + error + " ns, bound " + bound + " ns");
    assertTrue(error <= bound + (truth[1] - truth[0]), "off by " + error + " ns, bound " + bound);
    assertTrue(error <= 3_000, "first snapshot of an -Xint JVM off by " + error + " ns");
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
