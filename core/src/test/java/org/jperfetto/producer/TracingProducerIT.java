package org.jperfetto.producer;

import static org.jperfetto.producer.FakeProducerHost.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TestEvent;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** TracingProducer against a fake ProducerPort host over a real UNIX socket and a real memfd. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TracingProducerIT {
  private static final String DS = "org.jperfetto.test";
  @TempDir
  Path dir;

  private String socket() {
    return dir.resolve("producer.sock").toString();
  }

  /** A data source recording its callbacks; per-instance state is "state-<id>". */
  static class Recorder implements DataSourceHandler<String> {
    final List<String> events = new CopyOnWriteArrayList<>();
    final AtomicReference<StopHandle> heldStop = new AtomicReference<>();
    volatile boolean holdStop;

    @Override
    public String onSetup(DataSourceInstance<String> instance) {
      events.add("setup " + instance.instanceId());
      return "state-" + instance.instanceId();
    }

    @Override
    public void onStart(DataSourceInstance<String> instance) {
      events.add("start " + instance.instanceId());
    }

    @Override
    public void onStop(DataSourceInstance<String> instance, StopHandle stop) {
      events.add("stop " + instance.instanceId());
      if (holdStop) {
        heldStop.set(stop);
      } else {
        stop.done();
      }
    }

    @Override
    public void onFlush(DataSourceInstance<String> instance) {
      events.add("flush " + instance.instanceId());
    }

    @Override
    public void onClearIncrementalState(DataSourceInstance<String> instance) {
      events.add("clear " + instance.instanceId());
    }
  }

  private static DataSource<String> dataSource(Recorder recorder, BufferExhaustedPolicy policy) {
    return DataSource.create(DataSourceDescriptor.newBuilder().setName(DS).setWillNotifyOnStop(true)
        .setWillNotifyOnStart(true).build(), recorder, policy);
  }

  private TracingProducer producer(DataSource<?> ds) {
    return TracingProducer.builder("test-producer").socketPath(socket()).smbSizeHint(64 * 4096)
        .smbPageSizeHint(4096).reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
        .dataSource(ds).start();
  }

  /** Waits for the producer to be connected and its GetAsyncCommand stream to be open. */
  private static void ready(FakeProducerHost host, TracingProducer producer) throws InterruptedException {
    assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
    await("stream", host::hasAsyncStream);
  }

  /** Writes one test packet: for_testing { payload { str: text } } and timestamp i. */
  static void writeTest(TraceContext<String> ctx, long i, String text) {
    ProtoWriter p = ctx.newTracePacket();
    p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
    p.beginNested(TracePacket.FOR_TESTING_FIELD_NUMBER);
    p.beginNested(TestEvent.PAYLOAD_FIELD_NUMBER);
    p.appendString(TestEvent.TestPayload.STR_FIELD_NUMBER, text);
    p.endNested();
    p.endNested();
  }

  @Test
  void connectsInitializesAndRegisters() throws Exception {
    try (FakeProducerHost host = new FakeProducerHost(socket(), false);
        TracingProducer producer = producer(dataSource(new Recorder(), BufferExhaustedPolicy.DROP))) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      await("registration", () -> host.registeredDataSources.contains(DS) && host.hasAsyncStream());
      var init = host.inits.get(0);
      assertEquals("test-producer", init.getProducerName());
      assertEquals(TracingProducer.SDK_VERSION, init.getSdkVersion());
      assertEquals(64 * 4096, init.getSharedMemorySizeHintBytes());
      assertEquals(4096, init.getSharedMemoryPageSizeHintBytes());
      producer.sync().get(10, TimeUnit.SECONDS);
      producer.updateDataSource(DataSourceDescriptor.newBuilder().setName(DS).build()).get(10, TimeUnit.SECONDS);
      assertEquals(List.of("Sync", "UpdateDataSource"), host.syncs);
      DataSource<Void> late = DataSource.named("org.jperfetto.late");
      producer.register(late);
      await("late registration", () -> host.registeredDataSources.contains("org.jperfetto.late"));
      producer.unregister(late);
      await("unregistration", () -> host.calls.stream().anyMatch(e -> e.getKey().equals("UnregisterDataSource")));
    }
  }

  @Test
  void theDropGraceGoesToTheSmbTheServiceSetsUp() throws Exception {
    DataSource<String> ds = dataSource(new Recorder(), BufferExhaustedPolicy.DROP);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false);
        TracingProducer producer = TracingProducer.builder("test-producer").socketPath(socket())
            .dropGrace(Duration.ofMillis(7)).dataSource(ds).start()) {
      ready(host, producer);
      assertEquals(-1, producer.dropGraceNanosForTesting(), "no SMB yet");
      host.setUpTracing(64, 4096, 8 << 20);
      await("SMB set up", () -> producer.dropGraceNanosForTesting() >= 0);
      assertEquals(Duration.ofMillis(7).toNanos(), producer.dropGraceNanosForTesting());
    }
  }

  @Test
  void theDropGraceIsBetweenZeroAndOneSecond() {
    TracingProducer.Builder b = TracingProducer.builder("test-producer");
    assertThrows(IllegalArgumentException.class, () -> b.dropGrace(Duration.ofNanos(-1)));
    assertThrows(IllegalArgumentException.class, () -> b.dropGrace(Duration.ofMillis(1001)));
    assertThrows(NullPointerException.class, () -> b.dropGrace(null));
    b.dropGrace(Duration.ZERO);
    b.dropGrace(TracingProducer.MAX_DROP_GRACE);
  }

  @Test
  void olderServiceWithoutSyncOrUpdateDataSourceFailsThoseCallsCleanly() throws Exception {
    try (FakeProducerHost host = new FakeProducerHost(socket(), true);
        TracingProducer producer = producer(dataSource(new Recorder(), BufferExhaustedPolicy.DROP))) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      for (var call : List.of(producer.sync(),
          producer.updateDataSource(DataSourceDescriptor.newBuilder().setName(DS).build()))) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        IpcException ipc = assertInstanceOf(IpcException.class, e.getCause());
        assertEquals(IpcException.Kind.METHOD_NOT_FOUND, ipc.kind());
      }
      // the connection is still fine
      assertTrue(producer.isConnected());
      await("registration", () -> host.registeredDataSources.contains(DS));
    }
  }

  @Test
  void packetsWrittenAfterStartReachTheServiceAndFlushIsAckedAfterThem() throws Exception {
    Recorder recorder = new Recorder();
    DataSource<String> ds = dataSource(recorder, BufferExhaustedPolicy.STALL);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      assertFalse(ds.isEnabled());
      ds.trace(ctx -> { throw new AssertionError("no instance yet"); });
      host.setUpTracing(64, 4096, 8 << 20);
      host.startDataSource(11, DS, 1);
      await("instance enabled", ds::isEnabled);
      await("started notified", () -> host.started.contains(11L));
      int n = 5000;
      for (int i = 0; i < n; i++) {
        long ts = i;
        ds.trace(ctx -> writeTest(ctx, ts, ctx.state()));
      }
      await("first chunks committed", () -> host.service.chunksMoved > 0);
      ds.trace(TraceContext::flush);
      host.flush(77, 11);
      await("flush ack", () -> host.flushAckIndex(77) >= 0);
      assertTrue(recorder.events.contains("flush 11"));
      List<ServiceSide.Read> reads = host.service.readAll();
      assertEquals(n, reads.size());
      for (int i = 0; i < n; i++) {
        TracePacket packet = TracePacket.parseFrom(reads.get(i).data());
        assertEquals(i, packet.getTimestamp());
        assertEquals("state-11", packet.getForTesting().getPayload().getStr(0));
      }
      assertEquals(1, host.writers.size());
      assertEquals(1, host.writers.get(0).getTargetBuffer());
      assertEquals(reads.get(0).writerId(), host.writers.get(0).getTraceWriterId());
      assertEquals(0, host.service.badChunks);
    }
  }

  @Test
  void asynchronousFlushIsAckedOnlyWhenDoneAndAfterWhatWasCommittedMeanwhile() throws Exception {
    AtomicReference<DataSourceHandler.FlushHandle> held = new AtomicReference<>();
    Recorder recorder = new Recorder() {
      @Override
      public void onFlush(DataSourceInstance<String> instance, FlushHandle flush) {
        events.add("async flush " + instance.instanceId());
        held.set(flush); // finished later by another thread, as a stream-draining source does
      }
    };
    DataSource<String> ds = dataSource(recorder, BufferExhaustedPolicy.STALL);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      host.setUpTracing(64, 4096, 8 << 20);
      host.startDataSource(5, DS, 1);
      await("instance enabled", ds::isEnabled);
      host.flush(78, 5);
      await("flush handed to the data source", () -> held.get() != null);
      // The producer's thread is free while the flush is pending: commits still flow.
      ds.trace(ctx -> {
        writeTest(ctx, 1, "before done");
        ctx.flush();
      });
      await("committed while the flush is pending", () -> host.service.chunksMoved > 0);
      Thread.sleep(200);
      assertEquals(-1, host.flushAckIndex(78), "no ack before done()");
      int commitsBeforeDone = host.commits.size();
      Thread other = Thread.ofPlatform().start(() -> {
        held.get().done();
        held.get().done(); // a second call does nothing
      });
      other.join();
      await("flush ack", () -> host.flushAckIndex(78) >= 0);
      assertTrue(host.flushAckIndex(78) >= commitsBeforeDone, "ack after the chunk committed meanwhile");
      assertEquals(1, host.commits.stream().filter(c -> c.getFlushRequestId() == 78).count());
      assertEquals(List.of("async flush 5"), recorder.events.stream().filter(e -> e.contains("flush")).toList());
    }
  }

  @Test
  void twoConcurrentInstancesEachGetEveryPacketWithTheirOwnState() throws Exception {
    Recorder recorder = new Recorder();
    DataSource<String> ds = dataSource(recorder, BufferExhaustedPolicy.STALL);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      host.setUpTracing(64, 4096, 8 << 20);
      host.startDataSource(1, DS, 1);
      host.startDataSource(2, DS, 2);
      await("two instances", () -> ds.activeInstances() == 2);
      for (int i = 0; i < 100; i++) {
        long ts = i;
        ds.trace(ctx -> writeTest(ctx, ts, ctx.state()));
      }
      ds.trace(TraceContext::flush);
      await("both chunks", () -> host.service.chunksMoved >= 2);
      Map<Integer, List<TracePacket>> byWriter = new ConcurrentHashMap<>();
      for (ServiceSide.Read r : host.service.readAll()) {
        byWriter.computeIfAbsent(r.writerId(), k -> new ArrayList<>()).add(TracePacket.parseFrom(r.data()));
      }
      assertEquals(2, byWriter.size());
      Map<Integer, Integer> targetOf = new ConcurrentHashMap<>();
      host.writers.forEach(w -> targetOf.put(w.getTraceWriterId(), w.getTargetBuffer()));
      for (var e : byWriter.entrySet()) {
        assertEquals(100, e.getValue().size());
        int target = targetOf.get(e.getKey());
        assertEquals("state-" + target, e.getValue().get(0).getForTesting().getPayload().getStr(0),
            "instance i writes to buffer i");
      }
      // stop one: the other keeps tracing
      host.stopDataSource(1);
      await("one left", () -> ds.activeInstances() == 1 && host.stopped.contains(1L));
      AtomicInteger calls = new AtomicInteger();
      ds.trace(ctx -> {
        calls.incrementAndGet();
        assertEquals("state-2", ctx.state());
      });
      assertEquals(1, calls.get());
    }
  }

  @Test
  void asynchronousStopNotifiesOnlyWhenDone() throws Exception {
    Recorder recorder = new Recorder();
    recorder.holdStop = true;
    DataSource<String> ds = dataSource(recorder, BufferExhaustedPolicy.DROP);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      host.setUpTracing(16, 4096, 1 << 20);
      host.startDataSource(5, DS, 1);
      await("enabled", ds::isEnabled);
      host.clearIncrementalState(5);
      await("cleared", () -> recorder.events.contains("clear 5"));
      host.stopDataSource(5);
      await("stop callback", () -> recorder.heldStop.get() != null);
      producer.sync().get(10, TimeUnit.SECONDS);
      assertTrue(ds.isEnabled(), "still tracing until done()");
      assertTrue(host.stopped.isEmpty());
      recorder.heldStop.get().done();
      await("stopped notified", () -> host.stopped.contains(5L));
      assertFalse(ds.isEnabled());
      assertEquals(List.of("setup 5", "start 5", "clear 5", "stop 5"), recorder.events);
    }
  }

  @Test
  void reconnectsAfterTheServiceRestartsAndRegistersAgain() throws Exception {
    Recorder recorder = new Recorder();
    DataSource<String> ds = dataSource(recorder, BufferExhaustedPolicy.STALL);
    FakeProducerHost first = new FakeProducerHost(socket(), false);
    try (TracingProducer producer = producer(ds)) {
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      await("stream", first::hasAsyncStream);
      first.setUpTracing(16, 4096, 1 << 20);
      first.startDataSource(1, DS, 1);
      await("enabled", ds::isEnabled);
      first.close();
      await("instance stopped on disconnect", () -> !ds.isEnabled());
      // writers of the dead connection drop instead of stalling forever
      ds.trace(ctx -> { throw new AssertionError("no instance"); });
      UnixSocket.unlinkStale(socket());
      try (FakeProducerHost second = new FakeProducerHost(socket(), false)) {
        await("reconnected", () -> producer.connectionCount() == 2 && second.hasAsyncStream());
        await("registered again", () -> second.registeredDataSources.contains(DS));
        second.setUpTracing(16, 4096, 1 << 20);
        second.startDataSource(2, DS, 1);
        await("enabled again", ds::isEnabled);
        for (int i = 0; i < 10; i++) {
          long ts = i;
          ds.trace(ctx -> writeTest(ctx, ts, ctx.state()));
        }
        ds.trace(TraceContext::flush);
        await("data on the new connection", () -> second.service.readAll().size() == 10);
      }
    }
  }

  @Test
  void withNoServiceItSaysSoOncePerOutageNamingTheSocketNotPerRetry() throws Exception {
    Logger jul = Logger.getLogger(TracingProducer.class.getName());
    List<LogRecord> records = new CopyOnWriteArrayList<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord r) {
        records.add(r);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    java.util.logging.Level before = jul.getLevel();
    jul.setLevel(java.util.logging.Level.FINE);
    jul.addHandler(handler);
    try (TracingProducer producer = producer(dataSource(new Recorder(), BufferExhaustedPolicy.STALL))) {
      Supplier<List<String>> unanswered = () -> records.stream()
          .filter(r -> r.getLevel() == java.util.logging.Level.INFO
              && r.getMessage().contains("no tracing service answers"))
          .map(LogRecord::getMessage).toList();
      LongSupplier retries = () -> records.stream()
          .filter(r -> r.getMessage().contains("cannot connect")).count();
      await("five failed attempts", () -> retries.getAsLong() >= 5);
      assertEquals(1, unanswered.get().size(), unanswered.get()::toString);
      assertTrue(unanswered.get().get(0).contains(socket()), unanswered.get().get(0));
      try (FakeProducerHost host = new FakeProducerHost(socket(), false)) {
        ready(host, producer);
      }
      long afterOutage = retries.getAsLong();
      await("failing again after the service went", () -> retries.getAsLong() >= afterOutage + 3);
      assertEquals(2, unanswered.get().size(), () -> "said again for the new outage only: " + unanswered.get());
    } finally {
      jul.removeHandler(handler);
      jul.setLevel(before);
    }
  }

  @Test
  void unsealedOrMissizedSharedMemoryIsRefused() throws Exception {
    DataSource<String> ds = dataSource(new Recorder(), BufferExhaustedPolicy.DROP);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      int unsealed = MemFd.create("unsealed", 16 * 4096);
      host.setUpTracingWith(unsealed, 4);
      int odd = MemFd.create("odd", 16 * 4096 + 100);
      MemFd.addSeals(odd, MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW);
      host.setUpTracingWith(odd, 4);
      host.startDataSource(1, DS, 1);
      producer.sync().get(10, TimeUnit.SECONDS);
      Thread.sleep(200);
      assertFalse(ds.isEnabled(), "no SMB was accepted, so nothing can start");
      assertTrue(producer.isConnected());
    }
  }

  @Test
  void eightThreadsUnderStallThroughTheSocketLoseNothing() throws Exception {
    DataSource<String> ds = dataSource(new Recorder(), BufferExhaustedPolicy.STALL);
    try (FakeProducerHost host = new FakeProducerHost(socket(), false); TracingProducer producer = producer(ds)) {
      ready(host, producer);
      host.setUpTracing(16, 4096, 64 << 20);
      host.startDataSource(1, DS, 1);
      await("enabled", ds::isEnabled);
      int threads = 8;
      int perThread = 20_000;
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        workers.add(Thread.ofPlatform().start(() -> {
          for (int i = 0; i < perThread; i++) {
            long ts = i;
            ds.trace(ctx -> ctx.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts));
          }
          ds.trace(TraceContext::flush);
        }));
      }
      for (Thread w : workers) {
        w.join();
      }
      await("all committed", () -> host.service.readAll().size() == threads * perThread);
      Map<Integer, Long> next = new ConcurrentHashMap<>();
      for (ServiceSide.Read r : host.service.readAll()) {
        long ts = TracePacket.parseFrom(r.data()).getTimestamp();
        assertEquals(next.getOrDefault(r.writerId(), 0L), ts, "writer " + r.writerId());
        next.put(r.writerId(), ts + 1);
      }
      assertEquals(threads, next.size());
    }
  }
}
