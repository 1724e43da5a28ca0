package org.jperfetto.producer;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Tasks a virtual thread hands to the producer thread: the producer's executor queue takes a
 * parking lock, and a virtual thread gets there (a late drain, Register/UnregisterTraceWriter) from
 * inside a packet on a writer that virtual threads share, where parking would unmount it with that
 * writer held. It posts the task here instead, without locks (a lock-free queue and an unpark),
 * and one platform thread of this connection, started when first needed, passes it on.
 */
final class VirtualThreadHandOff {
  private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final String name;
  private final BooleanSupplier over;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Thread> thread = new AtomicReference<>();

  /** over: the connection is gone (the thread ends once it says so). */
  VirtualThreadHandOff(String name, BooleanSupplier over) {
    this.name = name;
    this.over = over;
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
