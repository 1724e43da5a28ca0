package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.os.Membarrier;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through jtraced with SMB scraping switched off: a thread writes packets and parks holding its
 * chunk; a consumer's flush must bring every packet into the buffer by commits alone.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlushIT {
  private static final String DS = "org.jperfetto.flush_test";
  @TempDir
  Path dir;

  @Test
  void packetsOfAnIdleThreadReachTheConsumerOnFlushWithoutScraping() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("c.sock").toString();
    DataSource<Void> ds = DataSource.create(DataSourceDescriptor.newBuilder().setName(DS).build(),
        new DataSourceHandler<>() {}, BufferExhaustedPolicy.STALL);
    int n = 300; // small packets: all in the one chunk the thread holds
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
        TracingProducer producer = TracingProducer.builder("flush-it").socketPath(producerSocket)
            .dataSource(ds).start();
        TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      host.service().setSmbScrapingForTesting(false);
      assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
      producer.sync().get(20, TimeUnit.SECONDS);
      consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
          .addDataSources(TraceConfig.DataSource.newBuilder()
              .setConfig(DataSourceConfig.newBuilder().setName(DS)))
          .build());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!ds.isEnabled()) {
        assertTrue(System.nanoTime() < deadline, "data source never started");
        Thread.sleep(5);
      }

      CountDownLatch written = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Thread writer = Thread.ofPlatform().name("idle-writer").start(() -> {
        for (int i = 0; i < n; i++) {
          long ts = i;
          ds.trace(ctx -> ctx.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts));
        }
        written.countDown();
        try {
          release.await(); // parked, holding its chunk BEING_WRITTEN
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertTrue(written.await(20, TimeUnit.SECONDS));

      List<Long> timestamps = new ArrayList<>();
      read(consumer, timestamps);
      assertTrue(timestamps.size() < n, "without the flush the held chunk is not there: "
          + timestamps.size());
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      read(consumer, timestamps);
      List<Long> expected = new ArrayList<>();
      for (long i = 0; i < n; i++) {
        expected.add(i);
      }
      assertEquals(expected, timestamps, "every packet once, in order, by commits alone");

      release.countDown();
      writer.join();
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
    }
  }

  /** Adds the timestamps of this test's packets (the service's own have none) read now. */
  private static void read(TracingConsumer consumer, List<Long> timestamps) throws Exception {
    consumer.readBuffers((slices, size) -> {
      TracePacket p = TracePacket.parseFrom(ByteString.copyFrom(slices));
      if (p.hasTimestamp() && p.getTrustedPacketSequenceId() != 1) {
        timestamps.add(p.getTimestamp());
      }
    }).get(20, TimeUnit.SECONDS);
  }
}
