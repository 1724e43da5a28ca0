package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Startup tracing through jtraced: a data source traces before any service listens, into the
 * producer's own SMB; a session started later with the same data source config adopts it and
 * receives what was written before; without such a session the startup data is dropped.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StartupTracingIT {
  private static final String DS = "org.jperfetto.startup";
  @TempDir
  Path dir;

  private JtracedFixture jtraced() {
    return new JtracedFixture(dir);
  }

  private static DataSource<String> dataSource() {
    return JtracedFixture.dataSource(DS, BufferExhaustedPolicy.DROP);
  }

  private static DataSourceConfig dsConfig() {
    return DataSourceConfig.newBuilder().setName(DS).setLegacyConfig("startup-test").build();
  }

  private TracingProducer startProducer(DataSource<String> ds, Duration timeout) {
    TraceConfig startup = TraceConfig.newBuilder()
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(dsConfig())).build();
    return TracingProducer.builder("startup-producer").socketPath(jtraced().producerSocket())
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100))
        .startupTracing(startup, timeout).dataSource(ds).start();
  }

  private Map<String, Integer> session(DataSource<String> ds, TracingProducer producer, Runnable during)
      throws Exception {
    return jtraced().record(producer, dsConfig(), () -> ds.isEnabled() && producer.startupTracingPending() == 0,
        during);
  }

  @Test
  void whatWasTracedBeforeTheServiceReachesTheSessionThatAdoptsIt() throws Exception {
    DataSource<String> ds = dataSource();
    try (TracingProducer producer = startProducer(ds, Duration.ofSeconds(30))) {
      assertTrue(ds.isEnabled(), "tracing from start(), with no service anywhere");
      assertEquals(1, producer.startupTracingPending());
      JtracedFixture.write(ds, "early", 300);
      try (ServiceHost _ = jtraced().start()) {
        Map<String, Integer> counts = session(ds, producer, () -> JtracedFixture.write(ds, "late", 200));
        assertTrue(producer.usingProducerProvidedSmb());
        assertEquals(Map.of("early", 300, "late", 200), counts);
      }
    }
  }

  /**
   * Two data sources of one name (two libraries' TrackEvents, say): startup tracing starts one
   * instance of each, and the session's two setups (one per registration, equal configs) adopt
   * one each, so both libraries' early data reaches the session.
   */
  @Test
  void twoDataSourcesOfOneNameAreEachAdopted() throws Exception {
    DataSource<String> first = dataSource();
    DataSource<String> second = dataSource();
    TraceConfig startup = TraceConfig.newBuilder()
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(dsConfig())).build();
    try (TracingProducer producer = TracingProducer.builder("startup-two").socketPath(jtraced().producerSocket())
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100))
        .startupTracing(startup, Duration.ofSeconds(30)).dataSource(first).dataSource(second).start()) {
      assertTrue(first.isEnabled() && second.isEnabled(), "a startup instance of each");
      assertEquals(2, producer.startupTracingPending());
      JtracedFixture.write(first, "early_first", 100);
      JtracedFixture.write(second, "early_second", 50);
      try (ServiceHost _ = jtraced().start()) {
        Map<String, Integer> counts = jtraced().record(producer, dsConfig(),
            () -> first.isEnabled() && second.isEnabled() && producer.startupTracingPending() == 0, () -> {
              assertEquals(1, activeSlots(first), "adopted, not a second instance");
              assertEquals(1, activeSlots(second));
              JtracedFixture.write(first, "late_first", 20);
              JtracedFixture.write(second, "late_second", 10);
            });
        assertEquals(Map.of("early_first", 100, "early_second", 50, "late_first", 20, "late_second", 10), counts);
      }
    }
  }

  @Test
  void withoutASessionInTimeTheStartupDataIsDroppedAndTheSmbFreed() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost _ = jtraced().start();
        TracingProducer producer = startProducer(ds, Duration.ofMillis(300))) {
      // Enough to fill the 256 KiB SMB several times over: only freed chunks let later writes in.
      JtracedFixture.write(ds, "early", 20_000);
      FakeProducerHost.await("startup aborted", () -> producer.startupTracingPending() == 0 && !ds.isEnabled());
      Map<String, Integer> counts = session(ds, producer, () -> JtracedFixture.write(ds, "late", 200));
      assertEquals(Map.of("late", 200), counts);
    }
  }

  @Test
  void closingWithoutEverConnectingStopsTheStartupInstances() {
    DataSource<String> ds = dataSource();
    TracingProducer producer = startProducer(ds, Duration.ofSeconds(30));
    JtracedFixture.write(ds, "nowhere", 10);
    assertTrue(ds.isEnabled());
    producer.close();
    assertEquals(0, producer.startupTracingPending());
    assertTrue(!ds.isEnabled(), "no instance left tracing after close");
  }

  @Test
  void aSessionWithAnotherConfigDoesNotAdopt() throws Exception {
    DataSource<String> ds = dataSource();
    try (ServiceHost _ = jtraced().start();
        TracingProducer producer = startProducer(ds, Duration.ofSeconds(30))) {
      JtracedFixture.write(ds, "early", 10);
      assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
      try (TracingConsumer consumer = TracingConsumer.connect(jtraced().consumerSocket())) {
        consumer.enableTracing(TraceConfig.newBuilder()
            .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(256))
            .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
                dsConfig().toBuilder().setLegacyConfig("something else")))
            .build());
        FakeProducerHost.await("second instance", () -> activeSlots(ds) == 2);
        assertEquals(1, producer.startupTracingPending(), "the startup instance still waits");
        consumer.disableTracing().get(20, TimeUnit.SECONDS);
      }
      assertEquals(1, producer.startupTracingPending());
    }
  }

  private static int activeSlots(DataSource<?> ds) {
    int n = 0;
    for (int i = 0; i < DataSource.MAX_INSTANCES; i++) {
      if (ds.slot(i) != null) {
        n++;
      }
    }
    return n;
  }
}
