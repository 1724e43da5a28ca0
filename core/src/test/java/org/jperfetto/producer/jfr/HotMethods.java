package org.jperfetto.producer.jfr;

import java.util.concurrent.TimeUnit;

/**
 * A known hot method for the stack sample tests: {@link #spin} computes without calling anything,
 * so whatever the JIT does it stays the leaf frame, and a thread that runs it is on CPU in Java.
 */
public final class HotMethods {
  static volatile long sink;

  private HotMethods() {}

  /** The hot method: an arithmetic loop for about nanos. */
  public static long spin(long nanos) {
    long x = 0x9E3779B97F4A7C15L;
    long end = System.nanoTime() + nanos;
    while (true) {
      for (int i = 0; i < 10_000; i++) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
      }
      if (System.nanoTime() >= end) { // an intrinsic: no frame of its own in a sample
        return x;
      }
    }
  }

  /** The allocating method: arrays of 1 KiB for about millis. */
  static void allocate(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < end) {
      for (int i = 0; i < 1000; i++) {
        garbage = new byte[1024];
      }
    }
  }

  static volatile Object garbage;

  /** Calls itself depth times, then spins for about nanos at the bottom. */
  static long deep(int depth, long nanos) {
    return depth == 0 ? spin(nanos) : deep(depth - 1, nanos) + 1;
  }

  /** Starts a platform thread called name that spins (at depth calls deep) for millis; returns it. */
  static Thread start(String name, int depth, long millis, long[] tidOut) {
    return Thread.ofPlatform().name(name).start(() -> {
      tidOut[0] = JvmWorkload.currentTid();
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
      while (System.nanoTime() < end) {
        sink = deep(depth, TimeUnit.MILLISECONDS.toNanos(50));
      }
    });
  }
}
