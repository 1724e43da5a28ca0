package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.TaskRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class IdleHeapTrimTest {
  private static final long MB = 1L << 20;

  /** Runs delayed tasks when told to, on the test's thread. */
  private static final class StepRunner implements TaskRunner {
    final Deque<Runnable> due = new ArrayDeque<>();

    @Override
    public void post(Runnable task) {
      due.add(task);
    }

    @Override
    public Cancellable postDelayed(Runnable task, long delayMs) {
      due.add(task);
      return () -> due.remove(task);
    }

    @Override
    public boolean isOnRunnerThread() {
      return true;
    }

    void step() {
      due.poll().run();
    }
  }

  private final StepRunner runner = new StepRunner();
  private final AtomicInteger sessions = new AtomicInteger();
  private final AtomicLong heap = new AtomicLong();
  private long heapAfterCollection;
  private final IdleHeapTrim trim = new IdleHeapTrim(runner, 1, sessions::get, heap::get,
      () -> heap.set(heapAfterCollection));

  @Test
  void collectsOnceTheLastSessionIsGoneAndOnlyWhenTheHeapGrew() {
    trim.start();
    runner.step(); // schedules the first look
    heap.set(300 * MB);
    heapAfterCollection = 6 * MB;
    sessions.set(1);
    runner.step();
    assertEquals(0, trim.collections(), "a live session's read-out may need its heap");
    sessions.set(0);
    runner.step();
    assertEquals(1, trim.collections());
    assertEquals(6 * MB, heap.get());
    heap.set(IdleHeapTrim.FLOOR_BYTES - MB);
    runner.step();
    assertEquals(1, trim.collections(), "a small heap is left alone");
    heap.set(40 * MB);
    runner.step();
    assertEquals(2, trim.collections(), "grown again by the next session: collected again");
    assertEquals(1, runner.due.size(), "it keeps looking");
    trim.stop();
    assertEquals(0, runner.due.size());
  }

  @Test
  void aLookAskedForNowCollectsBeforeThePeriodAndKeepsTheSchedule() {
    trim.start();
    runner.step(); // schedules the first look
    heap.set(60 * MB);
    heapAfterCollection = 6 * MB;
    sessions.set(1);
    trim.checkSoon();
    assertEquals(2, runner.due.size(), "one look now, beside the periodic one");
    runner.due.removeLast().run();
    assertEquals(0, trim.collections(), "not while a session lives");
    sessions.set(0);
    trim.checkSoon();
    runner.due.removeLast().run();
    assertEquals(1, trim.collections());
    assertEquals(6 * MB, heap.get());
    assertEquals(1, runner.due.size(), "the look now does not start a second schedule");
  }

  @Test
  void aHeapThatDoesNotShrinkIsNotCollectedAgainAndAgain() {
    trim.start();
    runner.step();
    heap.set(300 * MB);
    heapAfterCollection = 300 * MB; // a collector that keeps what it has
    for (int i = 0; i < 5; i++) {
      runner.step();
    }
    assertEquals(1, trim.collections());
    heap.set(700 * MB);
    runner.step();
    assertEquals(2, trim.collections(), "past twice what was left: worth another try");
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void jtracedCollectsWhenItsLastSessionEnds(@TempDir java.nio.file.Path dir) throws Exception {
    AtomicLong grown = new AtomicLong(500 * MB);
    AtomicInteger collections = new AtomicInteger();
    ServiceHost.Options options = ServiceHost.Options.of(dir.resolve("p.sock").toString(),
        dir.resolve("c.sock").toString());
    try (ServiceHost host = ServiceHost.start(options);
        TracingConsumer consumer = TracingConsumer.connect(host.consumerSocket())) {
      TraceConfig config = TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
              org.jperfetto.protos.DataSourceConfig.newBuilder().setName("track_event")))
          .build();
      TracingSession session = consumer.enableTracing(config);
      host.giveBackHeapWhenIdle(5, grown::get, () -> {
        collections.incrementAndGet();
        grown.set(MB);
      });
      Thread.sleep(100); // some twenty looks with the session live
      assertEquals(0, collections.get(), "nothing collected while a session lives");
      consumer.disableTracing().get(10, TimeUnit.SECONDS);
      session.disabled().get(10, TimeUnit.SECONDS);
      consumer.freeBuffers().get(10, TimeUnit.SECONDS);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (collections.get() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertEquals(1, collections.get(), "one collection once the session was freed");
      assertTrue(consumer.isConnected());
    }
  }
}
