package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.os.MemFd;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The producer-provided SMB through jtraced: adopted when sealed and of the service's sizes (the
 * service says so and the trace arrives), refused otherwise with the producer falling back to the
 * service's SMB, and offered again on a reconnect.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProducerProvidedSmbIT {
  private static final String DS = "org.jperfetto.provided_smb";
  @TempDir
  Path dir;

  private String producerSocket() {
    return dir.resolve("p.sock").toString();
  }

  private String consumerSocket() {
    return dir.resolve("c.sock").toString();
  }

  private ServiceHost service() throws Exception {
    return ServiceHost.start(ServiceHost.Options.of(producerSocket(), consumerSocket()));
  }

  private static DataSource<String> dataSource() {
    return DataSource.create(DataSourceDescriptor.newBuilder().setName(DS).setWillNotifyOnStart(true).build(),
        new TracingProducerIT.Recorder(), BufferExhaustedPolicy.STALL);
  }

  private TracingProducer.Builder producer(DataSource<?> ds) {
    return TracingProducer.builder("smb-producer").socketPath(producerSocket())
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
        .producerProvidedSmb(true).dataSource(ds);
  }

  /** Records n test packets from ds through the service; returns how many came back. */
  private int record(DataSource<String> ds, TracingProducer producer, int n) throws Exception {
    assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
    producer.sync().get(20, TimeUnit.SECONDS);
    try (TracingConsumer consumer = TracingConsumer.connect(consumerSocket())) {
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder().setName(DS)))
          .build());
      FakeProducerHost.await("data source started", ds::isEnabled);
      for (int i = 0; i < n; i++) {
        long ts = i;
        ds.trace(ctx -> TracingProducerIT.writeTest(ctx, ts, "provided-smb"));
      }
      ds.trace(TraceContext::flush);
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled end = session.disabled().get(20, TimeUnit.SECONDS);
      assertTrue(end.ok(), end.error());
      AtomicInteger found = new AtomicInteger();
      consumer.readBuffers((slices, size) -> {
        TracePacket p = TracePacket.parseFrom(ByteString.copyFrom(slices));
        if (p.hasForTesting() && p.getForTesting().getPayload().getStrList().equals(List.of("provided-smb"))) {
          found.incrementAndGet();
        }
      }).get(20, TimeUnit.SECONDS);
      return found.get();
    }
  }

  @Test
  void aSealedSmbOfTheServicesSizesIsAdoptedAndCarriesTheTrace() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost host = service();
        TracingProducer producer = producer(ds).smbSizeHint(128 * 1024).smbPageSizeHint(8192).start()) {
      assertEquals(2_000, record(ds, producer, 2_000));
      assertTrue(producer.usingProducerProvidedSmb(), "the service answered using_shmem_provided_by_producer");
    }
  }

  @Test
  void anUnsealedSmbIsRefusedAndTheServicesIsUsed() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost host = service();
        TracingProducer producer = producer(ds).providedSmbShape(0, 0).start()) {
      assertEquals(500, record(ds, producer, 500));
      assertFalse(producer.usingProducerProvidedSmb());
    }
  }

  @Test
  void anSmbOfTheWrongSizeIsRefusedAndTheServicesIsUsed() throws Exception {
    DataSource<String> ds = dataSource();
    // 12 KiB is not a whole number of the hinted 8 KiB pages: the service would pick other sizes.
    try (ServiceHost host = service();
        TracingProducer producer = producer(ds).smbPageSizeHint(8192)
            .providedSmbShape(12 * 1024, ProvidedSmb.REQUIRED_SEALS).start()) {
      assertEquals(500, record(ds, producer, 500));
      assertFalse(producer.usingProducerProvidedSmb());
    }
  }

  @Test
  void aReconnectOffersAFreshSmbAgain() throws Exception {
    DataSource<String> ds = dataSource();
    try (TracingProducer producer = producer(ds).start()) {
      try (ServiceHost host = service()) {
        assertEquals(300, record(ds, producer, 300));
        assertTrue(producer.usingProducerProvidedSmb());
      }
      FakeProducerHost.await("disconnected", () -> !producer.isConnected());
      try (ServiceHost host = service()) {
        assertEquals(300, record(ds, producer, 300));
        assertTrue(producer.usingProducerProvidedSmb());
        assertEquals(2, producer.connectionCount());
      }
    }
  }

  @Test
  void sizesFollowTheServicesRule() {
    assertEquals(new ProvidedSmb.Sizes(256 * 1024, 4096), ProvidedSmb.Sizes.forHints(0, 0));
    assertEquals(new ProvidedSmb.Sizes(128 * 1024, 8192), ProvidedSmb.Sizes.forHints(128 * 1024, 8192));
    assertEquals(new ProvidedSmb.Sizes(64 * 1024, 32 * 1024), ProvidedSmb.Sizes.forHints(64 * 1024, 64 * 1024));
    assertEquals(new ProvidedSmb.Sizes(32L << 20, 4096), ProvidedSmb.Sizes.forHints(64L << 20, 4096));
    assertEquals(new ProvidedSmb.Sizes(256 * 1024, 4096), ProvidedSmb.Sizes.forHints(12 * 1024, 8192));
    assertEquals(new ProvidedSmb.Sizes(256 * 1024, 4096), ProvidedSmb.Sizes.forHints(48 * 1024, 12 * 1024));
    assertEquals(MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL, ProvidedSmb.REQUIRED_SEALS);
  }
}
