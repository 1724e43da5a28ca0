package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code jperfetto-tools ref-producer}: the reference burst, all of it in the trace, and its result line. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RefProducerIT {
  static final int SLICES = 3000;

  @TempDir Path dir;

  @Test
  void emitsTheNumberedSlicesAndCountersThenPrintsItsResultLine() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    String producerSocket = dir.resolve("p.sock").toString();
    ToolContext ctx = new ToolContext(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(ToolContext.PRODUCER_ENV, producerSocket));
    List<TracePacket> packets = new ArrayList<>();
    try (ServiceHost jtraced = ServiceHost.start(ServiceHost.Options.of(producerSocket,
        dir.resolve("c.sock").toString()));
        TracingConsumer consumer = TracingConsumer.connect(jtraced.consumerSocket())) {
      CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Tools.run(
          new String[] {RefProducer.NAME, Integer.toString(SLICES), "10", "20000", "0", "5000"}, ctx));
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(16384))
          .addDataSources(TraceConfig.DataSource.newBuilder()
              .setConfig(DataSourceConfig.newBuilder().setName("track_event")))
          .build());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!out.toString(StandardCharsets.UTF_8).contains("producer: ") && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      consumer.disableTracing().get(30, TimeUnit.SECONDS);
      assertTrue(session.disabled().get(30, TimeUnit.SECONDS).ok());
      assertEquals(Tools.EXIT_OK, exit.get(30, TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
      consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
          .get(30, TimeUnit.SECONDS);
    }
    String line = out.toString(StandardCharsets.UTF_8).strip();
    assertTrue(line.matches("producer: slices=" + SLICES + " counters=" + SLICES / 10
        + " emit_s=[0-9.]+ flush_s=[0-9.]+ slices_per_s=[0-9]+"), line);
    BitSet begun = new BitSet();
    long ends = 0;
    long counters = 0;
    for (TracePacket p : packets) {
      if (!p.hasTrackEvent()) {
        continue;
      }
      switch (p.getTrackEvent().getType()) {
        case TYPE_SLICE_BEGIN -> begun.set((int) p.getTrackEvent().getDebugAnnotations(0).getIntValue());
        case TYPE_SLICE_END -> ends++;
        case TYPE_COUNTER -> counters++;
        default -> { }
      }
    }
    assertEquals(SLICES, begun.cardinality(), "every slice index, once");
    assertEquals(SLICES - 1, begun.length() - 1);
    assertEquals(SLICES, ends);
    assertEquals(SLICES / 10, counters);
    assertTrue(packets.stream().anyMatch(p -> p.hasTrackEvent()
        && p.getTrackEvent().getType() == TrackEvent.Type.TYPE_SLICE_BEGIN), "slices in the trace");
  }
}
