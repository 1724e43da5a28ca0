package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class JitSettleTest {
  @Test
  void readsUtimePlusStimeAfterANameWithSpacesAndParentheses() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    String stat = "4485 (C2 CompilerThre) S 1 4480 4480 0 -1 4194368 12 0 0 0 137 9 0 0 20 0 30 0 100";
    assertEquals(146, JitSettle.cpuTicks(stat));
    assertEquals(7, JitSettle.cpuTicks("1 (a) b) c) R 1 1 1 0 -1 0 0 0 0 0 3 4 0 0"));
    assertEquals(-1, JitSettle.cpuTicks("no parentheses 1 2 3"));
    assertEquals(-1, JitSettle.cpuTicks("1 (short) S 1 2"));
    assertEquals(-1, JitSettle.cpuTicks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 utime 4 0"));
  }

  @Test
  void knowsHotSpotsCompilerThreadsByTheirTruncatedNames() {
    assertTrue(JitSettle.isCompilerThread("C2 CompilerThre"));
    assertTrue(JitSettle.isCompilerThread("C1 CompilerThre"));
    assertFalse(JitSettle.isCompilerThread("GC Thread#0"));
    assertFalse(JitSettle.isCompilerThread("jtraced"));
  }

  @Test
  void findsThisJvmsCompilerThreadsAndTheirCpu() {
    JitSettle.Compilers jit = JitSettle.Compilers.ofThisJvm();
    assertFalse(jit.stats().isEmpty(), "a HotSpot JVM on Linux has JIT compiler threads in /proc/self/task");
    assertTrue(jit.known());
    long before = jit.ticks();
    assertTrue(before >= 0);
    assertTrue(jit.ticks() >= before, "CPU time only grows");
  }

  @Test
  void returnsOnceTheCounterStopsGrowing() {
    AtomicLong counter = new AtomicLong();
    int[] polls = {0};
    // Grows on the first 5 polls, then stays.
    JitSettle.Result r = JitSettle.await(() -> polls[0]++ < 5 ? counter.addAndGet(3) : counter.get(), 5_000);
    assertTrue(r.quiet());
    assertEquals(12, r.compilerTicks(), "the growth after the first reading"); // 5 reads of +3, first excluded
    assertTrue(r.waitedMillis() >= JitSettle.QUIET_MS, "waited the quiet period: " + r.waitedMillis());
    assertTrue(r.waitedMillis() < 5_000, "did not wait for the limit: " + r.waitedMillis());
  }

  @Test
  void givesUpAtTheLimitWhileTheCounterKeepsGrowing() {
    AtomicLong counter = new AtomicLong();
    JitSettle.Result r = JitSettle.await(counter::incrementAndGet, 200);
    assertFalse(r.quiet());
    assertTrue(r.waitedMillis() >= 200, "waited to the limit: " + r.waitedMillis());
    assertTrue(r.compilerTicks() > 0);
  }

  @Test
  void waitsForNothingWhenTheCounterIsUnknown() {
    JitSettle.Result r = JitSettle.await(() -> -1, 5_000);
    assertFalse(r.quiet());
    assertEquals(0, r.waitedMillis());
  }
}
