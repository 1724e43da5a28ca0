package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The default TaskRunner, for embedders of TracingService: one thread, posting order, timers. */
@Timeout(30)
class ThreadTaskRunnerTest {
  @Test
  void tasksRunInPostingOrderOnTheNamedThread() throws Exception {
    try (ThreadTaskRunner runner = new ThreadTaskRunner("svc-test")) {
      assertFalse(runner.isOnRunnerThread());
      List<String> seen = new CopyOnWriteArrayList<>();
      CompletableFuture<Void> done = new CompletableFuture<>();
      for (int i = 0; i < 100; i++) {
        int n = i;
        runner.post(() -> seen.add(n + (runner.isOnRunnerThread() ? "" : "!")
            + ("svc-test".equals(Thread.currentThread().getName()) ? "" : "?")));
      }
      runner.post(() -> done.complete(null));
      done.get(10, TimeUnit.SECONDS);
      assertEquals(100, seen.size());
      for (int i = 0; i < 100; i++) {
        assertEquals(String.valueOf(i), seen.get(i));
      }
    }
  }

  @Test
  void aFailingTaskDoesNotStopTheThread() throws Exception {
    try (ThreadTaskRunner runner = new ThreadTaskRunner("svc-fail")) {
      runner.post(() -> {
        throw new IllegalStateException("task failure on purpose");
      });
      CompletableFuture<Boolean> after = new CompletableFuture<>();
      runner.post(() -> after.complete(runner.isOnRunnerThread()));
      assertTrue(after.get(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void delayedTasksWaitAndCanBeCancelled() throws Exception {
    try (ThreadTaskRunner runner = new ThreadTaskRunner("svc-delay")) {
      AtomicBoolean cancelledRan = new AtomicBoolean();
      TaskRunner.Cancellable c = runner.postDelayed(() -> cancelledRan.set(true), 200);
      c.cancel();
      c.cancel(); // idempotent
      long start = System.nanoTime();
      CountDownLatch ran = new CountDownLatch(1);
      runner.postDelayed(ran::countDown, 100);
      assertTrue(ran.await(10, TimeUnit.SECONDS));
      assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(100));
      CountDownLatch later = new CountDownLatch(1);
      runner.postDelayed(later::countDown, 300); // past the cancelled one's time
      assertTrue(later.await(10, TimeUnit.SECONDS));
      assertFalse(cancelledRan.get());
    }
  }

  @Test
  void runOrPostRunsInlineOnTheThreadAndPostsFromElsewhere() throws Exception {
    try (ThreadTaskRunner runner = new ThreadTaskRunner("svc-inline")) {
      List<String> order = new CopyOnWriteArrayList<>();
      CompletableFuture<Void> done = new CompletableFuture<>();
      runner.post(() -> {
        runner.runOrPost(() -> order.add("inline"));
        order.add("after inline");
        done.complete(null);
      });
      done.get(10, TimeUnit.SECONDS);
      assertEquals(List.of("inline", "after inline"), order);
      CompletableFuture<Boolean> posted = new CompletableFuture<>();
      runner.runOrPost(() -> posted.complete(runner.isOnRunnerThread()));
      assertTrue(posted.get(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void closeDropsDelayedTasksButRunsThosePosted() throws Exception {
    ThreadTaskRunner runner = new ThreadTaskRunner("svc-close");
    AtomicBoolean delayedRan = new AtomicBoolean();
    CountDownLatch postedRan = new CountDownLatch(1);
    runner.postDelayed(() -> delayedRan.set(true), 100);
    runner.post(() -> {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      postedRan.countDown();
    });
    runner.close();
    assertTrue(postedRan.await(10, TimeUnit.SECONDS));
    Thread.sleep(300);
    assertFalse(delayedRan.get());
  }
}
