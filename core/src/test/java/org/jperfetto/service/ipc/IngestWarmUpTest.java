package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.ClockSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IngestWarmUpTest {
  private static final long NO_DEADLINE = Long.MAX_VALUE / 2;

  @Test
  void drivesAPrivateServiceOverItsSocketsAsTheCppSdkDoesUnderABurst() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 8, deadline, () -> false);
    // 64 pages of one chunk each, every round: each one committed, copied and freed again.
    assertEquals(8 * 64, r.chunksCommitted());
    // Most chunks end with a packet whose size a later CommitData patches.
    assertTrue(r.patchesSent() > 8 * 64 / 2, "patches: " + r.patchesSent());
    TraceStats.BufferStats discard = r.discardStats();
    assertNotNull(discard, "the DISCARD half's buffer stats");
    assertEquals(4 * 64, discard.getChunksWritten(), discard.toString());
    // Every patch of the DISCARD half hit its chunk, still in the buffer: none failed.
    assertEquals(0, discard.getPatchesFailed(), discard.toString());
    assertTrue(discard.getPatchesSucceeded() > 4 * 64 / 2, discard.toString());
    // The drop markers (one chunk in eleven) are seen as the writers' packet loss.
    assertTrue(discard.getTraceWriterPacketLoss() > 0, discard.toString());
    assertEquals(0, discard.getAbiViolations(), discard.toString());
    // Each half is read out: at least 150 whole packets of 19 bytes in each 4 KiB chunk of the
    // DISCARD half, less what the last chunks hold back until their patches come.
    assertTrue(r.bytesRead() > 3L * 64 * 150 * 19, "bytes read: " + r.bytesRead());
    // Its data source says it will notify (as the SDKs' do): each session's start and stop were
    // acknowledged by the service, so those handlers ran before any real producer needs them.
    assertEquals(4, r.notificationsAcknowledged());
  }

  @Test
  void pacedTrafficComesOneRequestAReadAndMeetsWhatARealServiceLoopMeets() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 8, IngestWarmUp.Traffic.PACED, deadline,
        () -> false);
    assertEquals(8 * 64, r.chunksCommitted());
    // Three rounds in four wait for the service to take each request before the next: 64 chunks,
    // one to three a request, so at least 21 requests a paced round.
    assertTrue(r.pacedRequests() >= 6 * 21, "paced requests: " + r.pacedRequests());
    // Each of them came in a read of its own (the control requests and the bulk rounds add more).
    assertTrue(r.producerReceives() >= r.pacedRequests(),
        r.producerReceives() + " reads for " + r.pacedRequests() + " paced requests");
    // Each round, a client connected to the consumer socket and hung up, next to the warm-up's own.
    assertEquals(1 + 8, r.consumerAccepted());
    // The ring half reads once a wake-up, so reads also end with the peer's data not drained.
    assertTrue(r.producerReadCaps() >= 3 * 21 && r.producerReadCaps() < r.producerReceives(),
        r.producerReadCaps() + " capped of " + r.producerReceives() + " reads");
    assertEquals(0, r.discardStats().getPatchesFailed(), r.discardStats().toString());
    assertEquals(4, r.notificationsAcknowledged());
  }

  @Test
  void bulkTrafficSendsWithoutWaiting() throws IOException {
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 4, NO_DEADLINE, () -> false);
    assertEquals(0, r.pacedRequests());
    assertEquals(1, r.consumerAccepted());
    assertTrue(r.producerReadCaps() > 0 && r.producerReadCaps() < r.producerReceives(),
        r.producerReadCaps() + " capped of " + r.producerReceives() + " reads");
  }

  @Test
  void stopsAtTheNextRoundWhenAskedToAndLeavesNothingBehind() throws IOException {
    long before = tempWarmUpDirs();
    int[] asked = {0};
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 100, NO_DEADLINE, () -> ++asked[0] > 3);
    assertTrue(r.chunksCommitted() <= 4 * 64, "rounds after stop: " + r.chunksCommitted());
    assertTrue(r.chunksCommitted() >= 64, "rounds before stop: " + r.chunksCommitted());
    assertEquals(before, tempWarmUpDirs(), "the private sockets' directory is removed");
  }

  @Test
  void theWholeWarmUpKeepsToItsTotalTimeLimitAndCountsOnce() throws IOException {
    int before = IngestWarmUp.FINISHED.get();
    long dirsBefore = tempWarmUpDirs();
    long start = System.nanoTime();
    // Far more rounds and passes than 300 ms allow: the total limit cuts every pass and wait short.
    IngestWarmUp.untilCompiled(ClockSource.jdk(), 100_000, 100_000, 5, 60_000, 60_000, 300);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(tookMs < 5_000, "kept to its 300 ms limit, give or take one round and a service stop: " + tookMs);
    assertEquals(before + 1, IngestWarmUp.FINISHED.get(), "one warm-up, however many passes");
    assertEquals(dirsBefore, tempWarmUpDirs(), "every pass removed its private sockets");
  }

  @Test
  void aPassedDeadlineStopsItBeforeTheFirstRound() throws IOException {
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 100, System.nanoTime() - 1, () -> false);
    assertEquals(0, r.chunksCommitted());
  }

  @Test
  void jtracedsSocketsExistDuringTheWarmUpAndAClientThatConnectsThenIsServedAfterIt(@TempDir Path dir)
      throws Exception {
    String producer = dir.resolve("p").toString();
    String consumer = dir.resolve("c").toString();
    int warmUpsBefore = IngestWarmUp.FINISHED.get();
    CompletableFuture<ServiceHost> host = CompletableFuture.supplyAsync(() -> {
      try {
        return ServiceHost.startAfterWarmUp(ServiceHost.Options.of(producer, consumer));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!Files.exists(Path.of(consumer)) && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertTrue(Files.exists(Path.of(consumer)), "the consumer socket is bound before the warm-up ends");
    assertEquals(warmUpsBefore, IngestWarmUp.FINISHED.get(), "still warming up when the socket appeared");
    try (IpcClient client = IpcClient.connect(producer)) {
      BoundService port = client.bind("ProducerPort").get(30, TimeUnit.SECONDS);
      assertTrue(port.hasMethod("CommitData"));
      assertEquals(warmUpsBefore + 1, IngestWarmUp.FINISHED.get(), "answered only after the warm-up");
    } finally {
      host.get(30, TimeUnit.SECONDS).close();
    }
  }

  private static long tempWarmUpDirs() throws IOException {
    try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return s.filter(p -> p.getFileName().toString().startsWith("jtraced-warmup")).count();
    }
  }
}
