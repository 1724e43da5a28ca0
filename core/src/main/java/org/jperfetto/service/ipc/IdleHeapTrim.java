package org.jperfetto.service.ipc;

import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.jperfetto.service.TaskRunner;

/**
 * Gives the Java heap back to the system once jtraced is idle again. Trace data lives off-heap and
 * is unmapped with its buffers, but reading a session out passes the trace through the heap, which
 * grows by about the trace's size and, with the serial collector jtraced runs on, keeps that memory
 * until a full collection. Every {@link #periodMs} on the service thread this looks whether no
 * session is left and the heap is larger than {@link #limitBytes}; then it asks for one collection
 * (which, with jtraced's -XX:MaxHeapFreeRatio, hands the free part back) and raises the limit to
 * twice what is left, so that a JVM that cannot shrink is not asked again and again.
 *
 * <p>It never runs while a session exists, and a collection of an idle service's small heap takes a
 * few milliseconds.
 */
final class IdleHeapTrim {
  /** How often jtraced looks. */
  static final long PERIOD_MS = 5_000;
  /** A heap this small is left as it is. */
  static final long FLOOR_BYTES = 16L << 20;

  private final TaskRunner runner;
  private final long periodMs;
  private final IntSupplier sessions;
  private final LongSupplier heapBytes;
  private final Runnable collect;
  private long limitBytes = FLOOR_BYTES;
  private int collections;
  private volatile TaskRunner.Cancellable next;

  /**
   * @param sessions the live sessions (asked on the runner's thread)
   * @param heapBytes the heap's committed size ({@code Runtime.totalMemory()})
   * @param collect a full collection ({@code System.gc()})
   */
  IdleHeapTrim(TaskRunner runner, long periodMs, IntSupplier sessions, LongSupplier heapBytes, Runnable collect) {
    this.runner = runner;
    this.periodMs = periodMs;
    this.sessions = sessions;
    this.heapBytes = heapBytes;
    this.collect = collect;
  }

  /** Starts looking (from any thread). */
  void start() {
    runner.post(this::schedule);
  }

  /** Stops looking (on the runner's thread, or once the runner is closed). */
  void stop() {
    TaskRunner.Cancellable n = next;
    if (n != null) {
      n.cancel();
    }
  }

  /** Collections asked for so far. */
  int collections() {
    return collections;
  }

  private void schedule() {
    next = runner.postDelayed(this::check, periodMs);
  }

  /** One look now, between the periodic ones (from any thread). */
  void checkSoon() {
    runner.post(this::collectIfIdle);
  }

  void check() {
    collectIfIdle();
    schedule();
  }

  private void collectIfIdle() {
    if (sessions.getAsInt() == 0 && heapBytes.getAsLong() > limitBytes) {
      collect.run();
      collections++;
      limitBytes = Math.max(FLOOR_BYTES, 2 * heapBytes.getAsLong());
    }
  }
}
