package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.cli.CliContext;
import org.jperfetto.cli.Jperfetto;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.jperfetto.tracing.TraceConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flight recorder (issue 48): a small ring buffer that wraps several times while threads
 * trace, read back as trace_processor reads it. With a clear period, each thread's slices from its
 * first clear still in the ring up to its last slice are all readable; without one, nothing is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlightRecorderIT {
  /** A 64 KiB ring holds about half a second of the workload below: it wraps about four times. */
  private static final int RING_KB = 64;
  private static final int THREADS = 2;
  private static final int BURST = 25;
  private static final long PAUSE_MS = 10;
  private static final Duration LOAD = Duration.ofSeconds(2);
  private static final int CLEAR_MS = 100;

  @TempDir
  Path dir;

  private static final TrackEvent TE = TrackEvent.builder().categories(RingWorkload.CATEGORY).build();

  private RingWorkload.Wrapped recordInProcess(Duration clearPeriod, long[] emitted) throws Exception {
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("flight-recorder").dataSource(TE.dataSource()))) {
      InProcessSession s = tracing.newSession(TraceConfigs.builder().trackEvent().bufferSizeKb(RING_KB)
          .clearPeriod(clearPeriod).build()).start();
      RingWorkload load = new RingWorkload(TE, THREADS, BURST, PAUSE_MS);
      Thread.sleep(LOAD.toMillis());
      System.arraycopy(load.stop(), 0, emitted, 0, THREADS);
      s.stop();
      return RingWorkload.Wrapped.of(s.readTrace());
    }
  }

  private static void assertWrappedManyTimes(RingWorkload.Wrapped w, long[] emitted) {
    long total = java.util.Arrays.stream(emitted).sum();
    assertTrue(w.beginsInFile() > 0 && total >= 3 * w.beginsInFile(),
        "the ring kept " + w.beginsInFile() + " of " + total + " slices: it must have wrapped several times");
    assertTrue(w.chunksOverwritten() > 0, "chunks overwritten: " + w);
  }

  @Test
  void aWrappedRingOfTheLibraryKeepsEverySliceSinceTheFirstClearReadable() throws Exception {
    long[] emitted = new long[THREADS];
    RingWorkload.Wrapped w = recordInProcess(Duration.ofMillis(CLEAR_MS), emitted);
    assertWrappedManyTimes(w, emitted);
    assertEquals(List.of(), w.unexpectedErrors(), "interned data resolves after every clear");
    assertEquals(List.of(), w.brokenTails(emitted));
    assertTrue(w.clears() >= THREADS * 2, "clears in the ring: " + w.clears());
    assertTrue(w.readableShare() >= 0.5, "readable share " + w.readableShare() + " of " + w);
  }

  @Test
  void withoutAClearPeriodAWrappedRingReadsAsEmpty() throws Exception {
    long[] emitted = new long[THREADS];
    RingWorkload.Wrapped w = recordInProcess(Duration.ZERO, emitted);
    assertWrappedManyTimes(w, emitted);
    assertTrue(w.readableShare() < 0.05, "readable share " + w.readableShare() + " of " + w);
  }

  @Test
  void jtracedClearsARingThatTheCliConfigLeftWithoutAPeriodAndTheCliWarns() throws Exception {
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("c.sock").toString();
    Path file = dir.resolve("ring.perfetto-trace");
    String config = "duration_ms: " + (LOAD.toMillis() + 1500) + " buffers { size_kb: " + RING_KB
        + " fill_policy: RING_BUFFER } data_sources { config { name: \"track_event\" } }";
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket)
            .withDefaultClearPeriodMs(CLEAR_MS));
        TracingProducer producer = TracingProducer.builder("flight-recorder-cli").socketPath(producerSocket)
            .dataSource(TE.dataSource()).start()) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      CliContext ctx = new CliContext(new ByteArrayInputStream(config.getBytes(StandardCharsets.UTF_8)),
          new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true),
          Map.of("PERFETTO_CONSUMER_SOCK_NAME", consumerSocket), false);
      CompletableFuture<Integer> cli = CompletableFuture.supplyAsync(() -> Jperfetto.run(
          new String[] {"--system", "--txt", "-c", "-", "-o", file.toString()}, ctx));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!RingWorkload.CATEGORY.isEnabled() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(RingWorkload.CATEGORY.isEnabled(), "the CLI's session started: " + err);
      long[] emitted;
      try (RingWorkload load = new RingWorkload(TE, THREADS, BURST, PAUSE_MS)) {
        Thread.sleep(LOAD.toMillis());
        emitted = load.stop();
      }
      assertEquals(0, cli.get(30, TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
      String stderr = err.toString(StandardCharsets.UTF_8);
      assertEquals(1, stderr.lines().filter(l -> l.contains("warning") && l.contains("ring buffer")
          && l.contains("incremental_state_config { clear_period_ms: ")).count(), "one line names the fix: " + stderr);
      RingWorkload.Wrapped w = RingWorkload.Wrapped.of(Files.readAllBytes(file));
      assertWrappedManyTimes(w, emitted);
      assertEquals(List.of(), w.unexpectedErrors());
      assertEquals(List.of(), w.brokenTails(emitted));
      assertTrue(w.readableShare() >= 0.5, "readable share " + w.readableShare() + " of " + w);
    }
  }
}
