package org.jperfetto.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handler as a Spring Boot app would have it, a producer of the system service: {@code connect}
 * to a jtraced (here the service on sockets of a temporary directory), a consumer records the
 * category {@value PerfettoObservationHandler#CATEGORY} only, and the app's observations are in the trace.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SystemServiceIT {
  @TempDir
  Path dir;

  @Test
  void aConnectedHandlerRecordsIntoTheSystemServicesSession() throws Exception {
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("c.sock").toString();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
        PerfettoObservationHandler handler = PerfettoObservationHandler.connect(
            TracingProducer.builder("micrometer-app").socketPath(producerSocket));
        TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      ObservationRegistry registry = ObservationRegistry.create();
      registry.observationConfig().observationHandler(handler);
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
              .setName(TrackEvent.DATA_SOURCE_NAME).setTrackEventConfig(TrackEventConfig.newBuilder()
                  .addDisabledCategories("*").addEnabledCategories(PerfettoObservationHandler.CATEGORY))))
          .build());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!handler.category().isEnabled() && System.nanoTime() < deadline) {
        Thread.sleep(10); // the producer connects in the background; the service starts it once it registers
      }
      assertTrue(handler.category().isEnabled(), "the session reached the handler's producer");

      Observation.createNotStarted("http.server.requests", registry).contextualName("http get /orders/{id}")
          .lowCardinalityKeyValue("method", "GET").highCardinalityKeyValue("http.url", "/orders/7")
          .observe(() -> Observation.createNotStarted("db.query", registry).observe(() -> { }));

      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled end = session.disabled().get(20, TimeUnit.SECONDS);
      assertTrue(end.ok(), end.error());
      List<TracePacket> packets = new ArrayList<>();
      consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
          .get(20, TimeUnit.SECONDS);
      RecordedTrace t = RecordedTrace.of(packets);

      assertEquals(List.of(), t.errors);
      RecordedTrace.Event request = t.begin("http get /orders/{id}");
      RecordedTrace.Event query = t.begin("db.query");
      assertEquals("GET", request.args().get("method"));
      assertEquals("/orders/7", request.args().get("http.url"));
      assertEquals(request.track(), query.track(), "nested on the thread's track");
      assertTrue(request.timestamp() <= query.timestamp()
          && t.endOf(query).timestamp() <= t.endOf(request).timestamp());
    }
  }
}
