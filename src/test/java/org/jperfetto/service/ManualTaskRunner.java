package org.jperfetto.service;

import java.util.ArrayDeque;
import java.util.PriorityQueue;

/** A TaskRunner on the test's own thread with virtual time: tests run tasks and advance the clock. */
public final class ManualTaskRunner implements TaskRunner {
  private record Delayed(long due, long seq, Runnable task, boolean[] cancelled) {}

  private final Thread owner = Thread.currentThread();
  private final ArrayDeque<Runnable> ready = new ArrayDeque<>();
  private final PriorityQueue<Delayed> delayed = new PriorityQueue<>(
      (a, b) -> a.due != b.due ? Long.compare(a.due, b.due) : Long.compare(a.seq, b.seq));
  private long nowMs;
  private long seq;

  @Override
  public void post(Runnable task) {
    ready.add(task);
  }

  @Override
  public Cancellable postDelayed(Runnable task, long delayMs) {
    boolean[] cancelled = {false};
    delayed.add(new Delayed(nowMs + Math.max(0, delayMs), seq++, task, cancelled));
    return () -> cancelled[0] = true;
  }

  @Override
  public boolean isOnRunnerThread() {
    return Thread.currentThread() == owner;
  }

  public void runUntilIdle() {
    while (!ready.isEmpty()) {
      ready.poll().run();
    }
  }

  /** Moves virtual time forward by ms, running what falls due on the way. */
  public void advance(long ms) {
    long target = nowMs + ms;
    runUntilIdle();
    while (!delayed.isEmpty() && delayed.peek().due <= target) {
      Delayed d = delayed.poll();
      nowMs = d.due;
      if (!d.cancelled[0]) {
        d.task.run();
      }
      runUntilIdle();
    }
    nowMs = target;
  }
}
