package org.jperfetto.producer;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Work a virtual thread must not do itself because it may block: sending CommitData (the drain's
 * lock, the socket's send lock) and handing tasks to the producer thread (its executor's queue
 * takes a parking lock). A virtual thread gets there from inside a packet on a writer that virtual
 * threads share, and blocking unmounts it with that writer held. It posts the work here instead,
 * without locks (a flag, a lock-free queue, an unpark), and one platform thread of this connection,
 * started when first needed, does it.
 */
final class VirtualThreadHandOff {
  private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final String name;
  private final Runnable drain;
  private final BooleanSupplier over;
  private final AtomicBoolean drainWanted = new AtomicBoolean();
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Thread> thread = new AtomicReference<>();

  /**
   * drain: sends the pending batch; over: the connection is gone (the thread ends once it says so).
   */
  VirtualThreadHandOff(String name, Runnable drain, BooleanSupplier over) {
    this.name = name;
    this.drain = drain;
    this.over = over;
  }

  /** Asks for a drain soon (requests coalesce). */
  void drainSoon() {
    if (!drainWanted.get() && drainWanted.compareAndSet(false, true)) {
      wake();
    }
  }

  /** Runs task on the hand-off thread soon. */
  void post(Runnable task) {
    tasks.add(task);
    wake();
  }

  private void wake() {
    Thread t = thread.get();
    if (t == null) {
      Thread made = Thread.ofPlatform().daemon().name(name).unstarted(this::loop);
      if (thread.compareAndSet(null, made)) {
        made.start();
        return;
      }
      t = thread.get();
    }
    LockSupport.unpark(t);
  }

  private void loop() {
    while (!over.getAsBoolean()) {
      boolean worked = false;
      if (drainWanted.getAndSet(false)) {
        runQuietly(drain);
        worked = true;
      }
      for (Runnable task; (task = tasks.poll()) != null; ) {
        runQuietly(task);
        worked = true;
      }
      if (!worked) {
        LockSupport.parkNanos(this, IDLE_PARK_NANOS);
      }
    }
    thread.set(null);
  }

  /** Runs work; a failure (already logged where it happened, or a bug) must not end this thread. */
  private static void runQuietly(Runnable work) {
    try {
      work.run();
    } catch (RuntimeException e) {
      System.getLogger(VirtualThreadHandOff.class.getName()).log(System.Logger.Level.ERROR,
          "hand-off task failed", e);
    }
  }
}
