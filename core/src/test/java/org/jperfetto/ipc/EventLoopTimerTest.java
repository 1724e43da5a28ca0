package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jperfetto.os.ErrnoException;
import org.junit.jupiter.api.Test;

/** Delayed tasks on the event loop: deadlines, order, cancellation, the loop's own thread. */
class EventLoopTimerTest {
  @Test
  void delayedTasksRunInDeadlineOrderOnTheLoopAndCancelledOnesDoNot() throws Exception {
    try (EventLoop loop = new EventLoop("timer-test")) {
      List<String> ran = new CopyOnWriteArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      long start = System.nanoTime();
      loop.schedule(() -> ran.add("c" + loop.inLoop()), 120);
      loop.schedule(() -> ran.add("a" + loop.inLoop()), 40);
      EventLoop.Timer cancelled = loop.schedule(() -> ran.add("x"), 60);
      loop.schedule(() -> ran.add("b1"), 80);
      loop.schedule(() -> ran.add("b2"), 80);
      loop.schedule(done::countDown, 150);
      cancelled.cancel();
      assertTrue(done.await(5, TimeUnit.SECONDS));
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;
      assertEquals(List.of("atrue", "b1", "b2", "ctrue"), ran);
      assertTrue(elapsedMs >= 150, "ran after " + elapsedMs + " ms");
    }
  }

  @Test
  void runAndWaitRunsOnTheLoopBeforeReturningAndPassesItsErrnoBack() throws Exception {
    try (EventLoop loop = new EventLoop("timer-test")) {
      boolean[] onLoop = new boolean[1];
      loop.runAndWait(() -> onLoop[0] = loop.inLoop());
      assertTrue(onLoop[0], "ran on the loop thread, and before runAndWait returned");
      ErrnoException e = assertThrows(
          ErrnoException.class,
          () -> loop.runAndWait(() -> {
            throw new ErrnoException("epoll_ctl", 9);
          }));
      assertTrue(e.getMessage().contains("epoll_ctl"), e.getMessage());
      CountDownLatch nested = new CountDownLatch(1);
      loop.execute(() -> {
        try {
          loop.runAndWait(nested::countDown); // on the loop itself: runs at once, no deadlock
        } catch (Exception x) {
          throw new IllegalStateException(x);
        }
      });
      assertTrue(nested.await(5, TimeUnit.SECONDS));
    }
  }

  @Test
  void aTimerScheduledFromTheLoopAndTasksPostedMeanwhileBothRun() throws Exception {
    try (EventLoop loop = new EventLoop("timer-test")) {
      CountDownLatch done = new CountDownLatch(2);
      loop.execute(() -> loop.schedule(done::countDown, 10));
      loop.execute(done::countDown);
      assertTrue(done.await(5, TimeUnit.SECONDS));
    }
  }
}
