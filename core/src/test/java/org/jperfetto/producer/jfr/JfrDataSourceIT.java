package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import jdk.jfr.FlightRecorder;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The data source's lifecycle in this JVM through jtraced's sockets: when JFR runs, refusals, flush. */
@Timeout(60)
class JfrDataSourceIT {
  @TempDir Path dir;
  JfrServiceFixture fixture;
  String producerSocket;
  ServiceHost host;
  TracingProducer producer;
  TracingConsumer consumer;
  DataSource<?> ds;

  @BeforeEach
  void start() throws Exception {
    fixture = JfrServiceFixture.start(dir, "jfr-it");
    producerSocket = fixture.producerSocket;
    host = fixture.host;
    producer = fixture.producer;
    ds = fixture.ds;
    consumer = fixture.consumer;
  }

  @AfterEach
  void stop() {
    fixture.close();
  }

  static int recordings() {
    return FlightRecorder.isInitialized() ? FlightRecorder.getFlightRecorder().getRecordings().size() : 0;
  }

  TracingSession enable(String legacyConfig) {
    return consumer.enableTracing(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
            DataSourceConfig.newBuilder().setName(JfrDataSource.NAME).setLegacyConfig(legacyConfig)))
        .build());
  }

  void disable(TracingSession session) throws Exception {
    consumer.disableTracing().get(20, TimeUnit.SECONDS);
    TracingDisabled d = session.disabled().get(20, TimeUnit.SECONDS);
    assertTrue(d.ok(), d.error());
  }

  List<TracePacket> read() throws Exception {
    List<TracePacket> out = new ArrayList<>();
    consumer.readBuffers((slices, size) -> out.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
        .get(20, TimeUnit.SECONDS);
    return out;
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
      Thread.sleep(5);
    }
  }

  @Test
  void warmUpInitializesJfrWithoutStartingARecording() throws Exception {
    int before = FlightRecorder.isInitialized() ? FlightRecorder.getFlightRecorder().getRecordings().size() : 0;
    Thread t = JfrDataSource.warmUpAsync();
    t.join(TimeUnit.SECONDS.toMillis(30));
    assertTrue(!t.isAlive(), "warm-up finished");
    assertTrue(FlightRecorder.isInitialized(), "JFR initialized");
    assertEquals(before, FlightRecorder.getFlightRecorder().getRecordings().size(), "no recording started");
  }

  @Test
  void jfrRunsOnlyWhileEnabledAndFlushDrainsIt() throws Exception {
    int before = recordings();
    Thread.sleep(200);
    assertEquals(before, recordings(), "registered but not enabled: no recording");
    TracingSession session = enable("groups=locks,gc lock_threshold=1ms");
    await("jvm.jfr recording", () -> JfrDataSource.recordingInstances(ds) == 1);
    assertEquals(before + 1, recordings(), "one RecordingStream while enabled");

    JvmWorkload w = new JvmWorkload();
    w.park(1);
    // Right after the park: JFR has it in a thread buffer, not yet flushed to the stream.
    consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
    TraceSlices trace = new TraceSlices(read());
    long parks = trace.slices.stream()
        .filter(s -> s.name().equals("Park") && trace.tidOf(s.track()) == w.parkerTid).count();
    assertEquals(1, parks, "the park is in the trace once the flush is acknowledged");

    disable(session);
    await("jvm.jfr stopped", () -> !ds.isEnabled());
    await("recording closed", () -> recordings() == before);
  }

  /**
   * A ring buffer that wraps loses the first track descriptors: jvm.jfr asks for the service's
   * incremental-state clears and describes its tracks again after each (issue 48).
   */
  @Test
  void eachClearMakesTheDataSourceDescribeItsTracksAgain() throws Exception {
    TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
        .setIncrementalStateConfig(TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(100))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(JfrDataSource.NAME).setLegacyConfig("groups=locks lock_threshold=1ms")))
        .build());
    await("jvm.jfr recording", () -> JfrDataSource.recordingInstances(ds) == 1);
    long tid = JvmWorkload.currentTid(); // this thread parks once a batch: one track, several batches
    int batches = 3;
    for (int i = 0; i < batches; i++) {
      LockSupport.parkNanos(JvmWorkload.PARK_NANOS);
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS); // written now
      Thread.sleep(300); // a few clears: the next park is written in a new incremental state
    }
    List<TracePacket> packets = read();
    disable(session);
    TraceSlices trace = new TraceSlices(packets);
    long parkTrack = trace.slices.stream()
        .filter(s -> s.name().equals("Park") && trace.tidOf(s.track()) == tid)
        .mapToLong(TraceSlices.Slice::track).findFirst().orElseThrow(() -> new AssertionError("no Park slice"));
    long described = packets.stream()
        .filter(p -> p.hasTrackDescriptor() && p.getTrackDescriptor().getUuid() == parkTrack).count();
    // Once without clears (the descriptor a wrapping ring overwrites); again after them.
    assertTrue(described >= 2, "the parking thread's track described again after a clear: " + described
        + " times in " + batches + " batches");
  }

  /**
   * The regression behind the demo's 3-second flushes: a flush of jvm.jfr used to block the
   * producer's thread until the stream drained, but that thread also sends every CommitData; with
   * another data source filling the (small) shared memory buffer meanwhile, the stream thread
   * stalled on a new chunk and the flush only ended at JfrDataSource.DRAIN_TIMEOUT.
   */
  @Test
  void flushDrainsPromptlyWhileAnotherDataSourceFillsTheSharedMemory() throws Exception {
    DataSource<Void> busy = DataSource.create(
        org.jperfetto.protos.DataSourceDescriptor.newBuilder().setName("jfr-it.busy").build(),
        new org.jperfetto.producer.DataSourceHandler<Void>() {},
        org.jperfetto.producer.BufferExhaustedPolicy.STALL_THEN_DROP);
    try (TracingProducer small = TracingProducer.builder("jfr-it-small").socketPath(producerSocket)
        .smbSizeHint(16 * 4096).smbPageSizeHint(4096).dataSource(busy).start()) {
      DataSource<?> jfr = JfrDataSource.register(small);
      assertTrue(small.awaitConnected(Duration.ofSeconds(10)));
      small.sync().get(10, TimeUnit.SECONDS);
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
              .setName(JfrDataSource.NAME).setLegacyConfig("groups=locks lock_threshold=1ms")))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
              .setName("jfr-it.busy")))
          .build());
      await("both enabled", () -> JfrDataSource.recordingInstances(jfr) == 1 && busy.isEnabled());
      java.util.concurrent.atomic.AtomicBoolean run = new java.util.concurrent.atomic.AtomicBoolean(true);
      Thread writer = Thread.ofPlatform().name("busy writer").start(() -> {
        byte[] payload = org.jperfetto.protos.TestEvent.newBuilder().setStr("x".repeat(500)).build().toByteArray();
        while (run.get()) {
          busy.trace(ctx -> ctx.newTracePacket().appendBytes(TracePacket.FOR_TESTING_FIELD_NUMBER, payload));
        }
      });
      try {
        JvmWorkload w = new JvmWorkload();
        for (int round = 0; round < 2; round++) {
          w.park(1);
          long t0 = System.nanoTime();
          consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
          long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
          assertTrue(ms < JfrDataSource.DRAIN_TIMEOUT.toMillis() - 200,
              "flush " + round + " took " + ms + " ms: it waited for the drain timeout, not the drain");
        }
      } finally {
        run.set(false);
        writer.join();
      }
      disable(session);
    }
  }

  @Test
  void twoSessionsEachGetTheirOwnRecordingAndDrain() throws Exception {
    int before = recordings();
    TracingSession first = enable("groups=locks lock_threshold=1ms");
    await("first instance", () -> JfrDataSource.recordingInstances(ds) == 1);
    TracingConsumer other = TracingConsumer.connect(dir.resolve("c.sock").toString());
    try {
      TracingSession second = other.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4 * 1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
              DataSourceConfig.newBuilder().setName(JfrDataSource.NAME)
                  .setLegacyConfig("groups=locks lock_threshold=1ms")))
          .build());
      await("second instance", () -> ds.activeInstances() == 2 && JfrDataSource.recordingInstances(ds) == 2);
      assertEquals(before + 2, recordings(), "one RecordingStream per instance");
      JvmWorkload w = new JvmWorkload();
      w.park(1);
      other.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
      for (TracingConsumer c : List.of(consumer, other)) {
        List<TracePacket> packets = new ArrayList<>();
        c.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
            .get(20, TimeUnit.SECONDS);
        TraceSlices trace = new TraceSlices(packets);
        assertEquals(1, trace.slices.stream()
            .filter(s -> s.name().equals("Park") && trace.tidOf(s.track()) == w.parkerTid).count(),
            "each session holds the park once");
      }
      other.disableTracing().get(20, TimeUnit.SECONDS);
      assertTrue(second.disabled().get(20, TimeUnit.SECONDS).ok());
    } finally {
      other.close();
    }
    disable(first);
    await("recordings closed", () -> recordings() == before);
  }

  @Test
  void aBadConfigIsRefusedAndStartsNoRecording() throws Exception {
    int before = recordings();
    TracingSession session = enable("groups=gc,heapdump");
    await("jvm.jfr instance started", ds::isEnabled);
    Thread.sleep(100);
    assertEquals(before, recordings(), "refused: no recording");
    ds.trace(ctx -> assertNull(ctx.state(), "refused instance has no bridge"));
    disable(session);
    assertTrue(read().stream().noneMatch(TracePacket::hasTrackEvent));
  }
}
