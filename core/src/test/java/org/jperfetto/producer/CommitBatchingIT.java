package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With a large SMB the writer sends completed chunks in batches; the ones a batch holds back reach
 * the service by themselves, within a few milliseconds, with no flush.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CommitBatchingIT {
  private static final String DS = "test.batching";

  @TempDir
  Path dir;

  @Test
  void chunksHeldBackForABatchReachTheServiceWithoutAFlush() throws Exception {
    JtracedFixture fixture = new JtracedFixture(dir);
    DataSource<String> ds = JtracedFixture.dataSource(DS, BufferExhaustedPolicy.STALL);
    try (ServiceHost _ = fixture.start();
        TracingProducer producer = TracingProducer.builder("batching").socketPath(fixture.producerSocket())
            .smbSizeHint(1 << 20).dataSource(ds).start();
        TracingConsumer consumer = TracingConsumer.connect(fixture.consumerSocket())) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
      producer.sync().get(20, TimeUnit.SECONDS);
      consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
          .addDataSources(TraceConfig.DataSource.newBuilder()
              .setConfig(DataSourceConfig.newBuilder().setName(DS)))
          .build());
      FakeProducerHost.await("instance running", () -> ds.activeInstances() == 1);
      // About 25 KiB of packets: six 4 KiB chunks completed, the seventh still open. A 1 MiB SMB
      // (256 pages) sends them in batches of 4, so some wait for the late drain.
      String text = "x".repeat(100);
      for (int i = 0; i < 200; i++) {
        long ts = i;
        ds.trace(ctx -> TracingProducerIT.writeTest(ctx, ts, text));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      long written = chunksWritten(consumer);
      while (System.nanoTime() < deadline) {
        Thread.sleep(50);
        long now = chunksWritten(consumer);
        if (now == written && now > 0) {
          break;
        }
        written = now;
      }
      assertTrue(written >= 5, "completed chunks committed without a flush: " + written);
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      assertEquals(written + 1, chunksWritten(consumer),
          "before the flush, the service had every completed chunk: only the writer's open one was missing");
    }
  }

  private static long chunksWritten(TracingConsumer consumer) throws Exception {
    return consumer.getTraceStats().get(20, TimeUnit.SECONDS).getBufferStats(0).getChunksWritten();
  }
}
