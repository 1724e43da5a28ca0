package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;

/** A real jtraced on sockets in a test directory, and one recorded session on it. */
record JtracedFixture(Path dir) {
  String producerSocket() {
    return dir.resolve("p.sock").toString();
  }

  String consumerSocket() {
    return dir.resolve("c.sock").toString();
  }

  ServiceHost start() throws Exception {
    return ServiceHost.start(ServiceHost.Options.of(producerSocket(), consumerSocket()));
  }

  /**
   * Once producer is connected: a session on dsConfig; when running says the producer side runs,
   * during writes; then flush, stop, and the for_testing payload strings counted.
   */
  Map<String, Integer> record(TracingProducer producer, DataSourceConfig dsConfig, BooleanSupplier running,
      Runnable during) throws Exception {
    assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
    producer.sync().get(20, TimeUnit.SECONDS);
    Map<String, Integer> counts = new HashMap<>();
    try (TracingConsumer consumer = TracingConsumer.connect(consumerSocket())) {
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(dsConfig))
          .build());
      FakeProducerHost.await("session instance running", running);
      during.run();
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled end = session.disabled().get(20, TimeUnit.SECONDS);
      assertTrue(end.ok(), end.error());
      consumer.readBuffers((slices, size) -> {
        TracePacket p = TracePacket.parseFrom(ByteString.copyFrom(slices));
        if (p.hasForTesting()) {
          counts.merge(String.join(",", p.getForTesting().getPayload().getStrList()), 1, Integer::sum);
        }
      }).get(20, TimeUnit.SECONDS);
    }
    return counts;
  }

  /** A data source named name that notifies on start, recording its callbacks. */
  static DataSource<String> dataSource(String name, BufferExhaustedPolicy policy) {
    return DataSource.create(DataSourceDescriptor.newBuilder().setName(name).setWillNotifyOnStart(true).build(),
        new TracingProducerIT.Recorder(), policy);
  }

  /** n test packets with payload text from ds, then the thread's chunk handed over. */
  static void write(DataSource<String> ds, String text, int n) {
    for (int i = 0; i < n; i++) {
      long ts = i;
      ds.trace(ctx -> TracingProducerIT.writeTest(ctx, ts, text));
    }
    ds.trace(TraceContext::flush);
  }
}
