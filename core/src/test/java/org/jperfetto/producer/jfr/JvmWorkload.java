package org.jperfetto.producer.jfr;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What the JFR tests make the JVM do: allocate until collections happen (and ask for one), contend
 * on a monitor, park. Records the Linux tids of the threads that block, so tests can find their
 * thread tracks.
 */
final class JvmWorkload {
  static final long PARK_NANOS = 5_000_000;
  static final long HOLD_MILLIS = 30;

  /** A lock object with its own class, so its monitor events can be told apart. */
  static final class TestMonitor {}

  static volatile Object sink;
  volatile long contenderTid;
  volatile long parkerTid;

  /** The calling thread's Linux tid, from /proc/thread-self. */
  static long currentTid() {
    try {
      return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Allocates about mb megabytes in short-lived arrays, then asks for a full collection. */
  static void allocate(int mb) {
    for (int i = 0; i < mb * 1024; i++) {
      sink = new byte[1024];
    }
    System.gc();
  }

  /**
   * "jfr-holder" holds a TestMonitor until "jfr-contender" is blocked on it, then HOLD_MILLIS more,
   * so the contender waits well above a 1 ms threshold however slowly threads start.
   */
  void contend() throws InterruptedException {
    TestMonitor lock = new TestMonitor();
    CountDownLatch held = new CountDownLatch(1);
    Thread[] contender = new Thread[1];
    CountDownLatch contenderMade = new CountDownLatch(1);
    Thread holder = new Thread(() -> {
      synchronized (lock) {
        held.countDown();
        try {
          contenderMade.await();
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
          while (contender[0].getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
            Thread.sleep(1);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS));
      }
    }, "jfr-holder");
    holder.start();
    held.await();
    contender[0] = new Thread(() -> {
      contenderTid = currentTid();
      synchronized (lock) {
        sink = lock;
      }
    }, "jfr-contender");
    contenderMade.countDown();
    contender[0].start();
    contender[0].join();
    holder.join();
  }

  /** "jfr-parker" parks n times for PARK_NANOS. */
  void park(int n) throws InterruptedException {
    Thread parker = new Thread(() -> {
      parkerTid = currentTid();
      for (int i = 0; i < n; i++) {
        LockSupport.parkNanos(PARK_NANOS);
      }
    }, "jfr-parker");
    parker.start();
    parker.join();
  }
}
