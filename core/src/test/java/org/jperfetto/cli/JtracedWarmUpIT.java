package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** jtraced's JIT warm-up beside a real service: clients are served meanwhile, nothing is left after it. */
@Timeout(60)
class JtracedWarmUpIT {
  @TempDir
  Path dir;

  @Test
  void aConsumerIsAnsweredWhileTheWarmUpRunsAndItLeavesNothingBehind() throws Exception {
    ServiceHost.Options options = ServiceHost.Options.of(dir.resolve("p.sock").toString(),
        dir.resolve("c.sock").toString());
    try (ServiceHost host = ServiceHost.start(options)) {
      Set<Thread> before = Thread.getAllStackTraces().keySet();
      CountDownLatch done = new CountDownLatch(1);
      // Far more than the test waits for: it is stopped, as jtraced's shutdown stops it.
      JtracedWarmUp warmUp = JtracedWarmUp.start(1_000, 100_000, done::countDown);
      TracingServiceState state;
      try (TracingConsumer consumer = TracingConsumer.connect(host.consumerSocket())) {
        state = consumer.queryServiceState(false).get(30, TimeUnit.SECONDS);
      }
      assertTrue(warmUp.thread().isAlive() || warmUp.failure() == null && warmUp.result() != null,
          "the warm-up still runs, or it finished cleanly: " + warmUp.failure());
      assertEquals(0, state.getTracingSessionsCount(), "the real service has none of the warm-up's sessions");
      assertTrue(state.getProducersList().isEmpty(), "nor its producer: " + state.getProducersList());

      awaitDirectory(warmUp);
      warmUp.close();
      assertFalse(warmUp.thread().isAlive(), "stopped within close()");
      assertTrue(done.await(1, TimeUnit.SECONDS), "whenDone ran");
      assertNull(warmUp.failure(), () -> "failed: " + warmUp.failure());
      JtracedWarmUp.Result result = warmUp.result();
      assertTrue(result.stopped(), result.toString());
      assertTrue(result.lowPriority(), "at the lowest priority: " + result);
      assertFalse(Files.exists(warmUp.directory()), "its socket directory is gone: " + warmUp.directory());
      awaitNoNewThreads(before);
      try (TracingConsumer consumer = TracingConsumer.connect(host.consumerSocket())) {
        state = consumer.queryServiceState(false).get(30, TimeUnit.SECONDS);
      }
      assertEquals(0, state.getTracingSessionsCount(), "the real service still serves, with no session");
    }
  }

  @Test
  void aWholeWarmUpRecordsAndReadsEverySession() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    CountDownLatch done = new CountDownLatch(1);
    JtracedWarmUp warmUp = JtracedWarmUp.start(2, 20_000, done::countDown);
    assertTrue(warmUp.await(50_000), "finished");
    assertTrue(done.await(1, TimeUnit.SECONDS), "whenDone ran");
    assertNull(warmUp.failure(), () -> "failed: " + warmUp.failure());
    JtracedWarmUp.Result result = warmUp.result();
    assertNotNull(result);
    assertEquals(2, result.sessions());
    assertEquals(40_000, result.slices());
    assertFalse(result.stopped());
    // Each slice's packets and every 10th counter went through the private service and back:
    // at least a few bytes each.
    assertTrue(result.traceBytes() > 40_000 * 8, result.toString());
    assertFalse(Files.exists(warmUp.directory()), "its socket directory is gone: " + warmUp.directory());
    awaitNoNewThreads(before);
  }

  @Test
  void onUnlessJperfettoWarmUpIsZero() {
    assertTrue(JtracedWarmUp.wanted(Map.of()));
    assertTrue(JtracedWarmUp.wanted(Map.of(JtracedWarmUp.ENV, "1")));
    assertFalse(JtracedWarmUp.wanted(Map.of(JtracedWarmUp.ENV, "0")));
  }

  private static void awaitDirectory(JtracedWarmUp warmUp) throws InterruptedException {
    while (warmUp.directory() == null && warmUp.thread().isAlive()) {
      Thread.sleep(5);
    }
    assertNotNull(warmUp.directory(), () -> "the warm-up never started its service: " + warmUp.failure());
  }

  /**
   * Every thread the warm-up started has ended (the JDK's own shared pools aside, whose idle workers
   * end on their own schedule).
   */
  private static void awaitNoNewThreads(Set<Thread> before) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> left;
    do {
      left = Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t) && t.isAlive())
          .map(Thread::getName).filter(n -> !n.startsWith("ForkJoinPool"))
          .collect(Collectors.toList());
      if (left.isEmpty()) {
        return;
      }
      Thread.sleep(10);
    } while (System.nanoTime() < deadline);
    assertEquals(List.of(), left, "threads the warm-up left behind");
  }
}
