package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.os.MemFd;
import org.jperfetto.protos.DataSourceConfig;
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

  private JtracedFixture jtraced() {
    return new JtracedFixture(dir);
  }

  private static DataSource<String> dataSource() {
    return JtracedFixture.dataSource(DS, BufferExhaustedPolicy.STALL);
  }

  private TracingProducer.Builder producer(DataSource<?> ds) {
    return TracingProducer.builder("smb-producer").socketPath(jtraced().producerSocket())
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
        .producerProvidedSmb(true).dataSource(ds);
  }

  /** Records n test packets from ds through the service; returns how many came back. */
  private int record(DataSource<String> ds, TracingProducer producer, int n) throws Exception {
    Map<String, Integer> counts = jtraced().record(producer, DataSourceConfig.newBuilder().setName(DS).build(),
        ds::isEnabled, () -> JtracedFixture.write(ds, "provided-smb", n));
    return counts.getOrDefault("provided-smb", 0);
  }

  @Test
  void aSealedSmbOfTheServicesSizesIsAdoptedAndCarriesTheTrace() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost _ = jtraced().start();
        TracingProducer producer = producer(ds).smbSizeHint(128 * 1024).smbPageSizeHint(8192).start()) {
      assertEquals(2_000, record(ds, producer, 2_000));
      assertTrue(producer.usingProducerProvidedSmb(), "the service answered using_shmem_provided_by_producer");
    }
  }

  @Test
  void anUnsealedSmbIsRefusedAndTheServicesIsUsed() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost _ = jtraced().start();
        TracingProducer producer = producer(ds).providedSmbShape(0, 0).start()) {
      assertEquals(500, record(ds, producer, 500));
      assertFalse(producer.usingProducerProvidedSmb());
    }
  }

  @Test
  void anSmbOfTheWrongSizeIsRefusedAndTheServicesIsUsed() throws Exception {
    DataSource<String> ds = dataSource();
    // 12 KiB is not a whole number of the hinted 8 KiB pages: the service would pick other sizes.
    try (ServiceHost _ = jtraced().start();
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
      try (ServiceHost _ = jtraced().start()) {
        assertEquals(300, record(ds, producer, 300));
        assertTrue(producer.usingProducerProvidedSmb());
      }
      FakeProducerHost.await("disconnected", () -> !producer.isConnected());
      try (ServiceHost _ = jtraced().start()) {
        assertEquals(300, record(ds, producer, 300));
        assertTrue(producer.usingProducerProvidedSmb());
        assertEquals(2, producer.connectionCount());
      }
    }
  }

  @Test
  void sizesFollowTheServicesRule() {
    assertEquals(new ShmSizes(256 * 1024, 4096), ShmSizes.validate(0, 0));
    assertEquals(new ShmSizes(128 * 1024, 8192), ShmSizes.validate(128 * 1024, 8192));
    assertEquals(new ShmSizes(64 * 1024, 32 * 1024), ShmSizes.validate(64 * 1024, 64 * 1024));
    assertEquals(new ShmSizes(32L << 20, 4096), ShmSizes.validate(64L << 20, 4096));
    assertEquals(new ShmSizes(256 * 1024, 4096), ShmSizes.validate(12 * 1024, 8192));
    assertEquals(new ShmSizes(256 * 1024, 4096), ShmSizes.validate(48 * 1024, 12 * 1024));
    assertEquals(MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL, ProvidedSmb.REQUIRED_SEALS);
  }
}
