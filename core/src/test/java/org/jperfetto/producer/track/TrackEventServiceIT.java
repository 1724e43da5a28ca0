package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end through our own service: TrackEvent in a TracingProducer -> jtraced's ServiceHost ->
 * TracingConsumer reading the trace back, as the perfetto CLI would. Events decoded with interning
 * resolved per trusted_packet_sequence_id, and the trace's real bytes per slice.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TrackEventServiceIT {
  @TempDir
  Path dir;

  @Test
  void slicesCountersAndFlowsGoThroughTheServiceIntoTheTrace() throws Exception {
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("c.sock").toString();
    Category ref = Category.of("ref");
    Category hidden = Category.of("hidden");
    Track counter = Track.counter("ref_counter");
    int n = 20_000;
    TrackEvent te = TrackEvent.builder().categories(ref, hidden).processName("svc_test")
        .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).build();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
        TracingProducer producer = TracingProducer.builder("svc-test").socketPath(producerSocket)
            .dataSource(te.dataSource()).start();
        TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(20)));
      producer.sync().get(20, TimeUnit.SECONDS); // the data source is registered by now
      TraceConfig config = TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8192)
              .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.DISCARD))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
              .setName(TrackEvent.DATA_SOURCE_NAME)
              .setTrackEventConfig(TrackEventConfig.newBuilder().addDisabledCategories("hidden"))))
          .build();
      TracingSession session = consumer.enableTracing(config);
      TrackTestHost.await("track_event started", ref::isEnabled);

      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        te.begin(ref, "ref_slice", "i", i);
        if (i % 10 == 0) {
          te.counter(ref, counter, (long) i);
        }
        te.end(ref);
      }
      long elapsed = System.nanoTime() - start;
      te.instant(ref, "flow-end", ev -> ev.terminatingFlow(9).arg("s", "done"));
      te.instant(hidden, "never");
      te.flush();
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled disabled = session.disabled().get(20, TimeUnit.SECONDS);
      assertTrue(disabled.ok(), disabled.error());
      List<TracePacket> packets = new ArrayList<>();
      long[] traceBytes = {0};
      long[] slowBytes = {0};
      long[] untrustedBytes = {0};
      consumer.readBuffers((slices, size) -> {
        TracePacket p = TracePacket.parseFrom(ByteString.copyFrom(slices));
        packets.add(p);
        if (p.getTrustedPacketSequenceId() != 1) { // leave out the service's own packets
          traceBytes[0] += size + 1 + TrackEventInteropTest.varintSize(size);
          slowBytes[0] += TrackEventInteropTest.slowTimestampBytes(p);
          untrustedBytes[0] += TrackEventInteropTest.producerBytes(p);
        }
      }).get(30, TimeUnit.SECONDS);

      DecodedEvents d = new DecodedEvents();
      for (TracePacket p : packets) {
        if (p.getTrustedPacketSequenceId() != 1) {
          d.add(p.getTrustedPacketSequenceId(), p);
        }
      }
      assertEquals(List.of(), d.errors);
      List<DecodedEvents.Event> slices = d.named("ref_slice");
      assertEquals(n, slices.size(), "every slice reached the trace");
      for (int i = 0; i < n; i++) {
        assertEquals(Map.of("i", (long) i), slices.get(i).args());
        assertEquals(List.of("ref"), slices.get(i).categories());
      }
      assertEquals(n, d.ofType(Type.TYPE_SLICE_END).size());
      List<DecodedEvents.Event> counters = d.ofType(Type.TYPE_COUNTER);
      assertEquals(n / 10, counters.size());
      assertEquals(10L, counters.get(1).counter());
      assertEquals("ref_counter", d.tracks.get(counter.uuid()).getStaticName());
      assertEquals(Map.of("s", "done"), d.named("flow-end").get(0).args());
      assertEquals(List.of(9L), d.named("flow-end").get(0).terminatingFlows());
      assertTrue(d.named("never").isEmpty());
      assertTrue(packets.stream().filter(p -> p.getTrustedPacketSequenceId() != 1)
          .allMatch(p -> p.getTrustedPid() == ProcessHandle.current().pid()), "trusted_pid stamped by the service");

      // The trusted fields' size depends on the service's state: a sequence id over 127 takes one more
      // byte per packet (a long-running service, or this JVM after other tests). Count them as a
      // fresh upstream traced writes them (the v58 capture) for the budget.
      long eventPackets = packets.stream().filter(p -> p.getTrustedPacketSequenceId() != 1).count();
      double perSlice = traceBytes[0] / (double) n;
      double atFullSpeed = (untrustedBytes[0] + TrackEventInteropTest.upstreamTrustedBytesPerPacket() * eventPackets
          - slowBytes[0]) / (double) n;
      System.out.printf("through jtraced: %d slices (one int arg, counter every 10th) in %.1f ms = %.3f M slices/s"
          + " (cold JVM, STALL, commits included); %.2f trace bytes per slice, %.2f with v58 traced's trusted"
          + " fields and every delta timestamp counted at 2 bytes%n",
          n, elapsed / 1e6, n / (elapsed / 1e9) / 1e6, perSlice, atFullSpeed);
      assertTrue(atFullSpeed <= 53.0, "bytes per slice " + atFullSpeed + " (raw " + perSlice + ")");
    }
  }
}
