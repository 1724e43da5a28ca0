package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TestEvent;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Whole sessions through the Java endpoints: in-process producers writing into real SMB chunks. */
@Timeout(30)
class TracingServiceTest {
  static final int SERVICE_UID = 4242;
  ManualTaskRunner runner;
  TracingService service;

  @BeforeEach
  void setUp() {
    runner = new ManualTaskRunner();
    service = newService(runner);
  }

  /** A service on runner with JDK clocks and {@link #SERVICE_UID}. */
  static TracingService newService(ManualTaskRunner runner) {
    return new TracingService(runner, SharedMemory.arenaFactory(), ClockSource.jdk(), SERVICE_UID);
  }

  static TraceConfig config(int sizeKb, TraceConfig.BufferConfig.FillPolicy policy, String... dataSources) {
    TraceConfig.Builder b = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(sizeKb).setFillPolicy(policy));
    for (String ds : dataSources) {
      b.addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder().setName(ds)));
    }
    return b.build();
  }

  static byte[] packet(String who, int seq, int padding) {
    return TracePacket.newBuilder().setTimestamp(1000L + seq)
        .setForTesting(TestEvent.newBuilder().setStr(who + "x".repeat(padding)).setSeqValue(seq))
        .build().toByteArray();
  }

  static List<TracePacket> testPackets(Trace t) {
    return t.getPacketList().stream().filter(TracePacket::hasForTesting).toList();
  }

  /** Checks each sequence is in order without gaps; returns the values per sequence id. */
  static Map<Integer, List<Integer>> sequences(Trace t) {
    Map<Integer, List<Integer>> bySeq = new HashMap<>();
    for (TracePacket p : testPackets(t)) {
      bySeq.computeIfAbsent(p.getTrustedPacketSequenceId(), k -> new ArrayList<>())
          .add(p.getForTesting().getSeqValue());
    }
    return bySeq;
  }

  static void assertContiguous(List<Integer> values) {
    for (int i = 1; i < values.size(); i++) {
      assertEquals(values.get(i - 1) + 1, values.get(i), "gap or repeat at " + i + ": " + values);
    }
  }

  /** Commits w's chunks but keeps its patches back; returns them. */
  static List<CommitDataRequest.ChunkToPatch> commitHoldingPatches(TestProducer p, TestTraceWriter w) {
    w.finishChunk();
    List<CommitDataRequest.ChunkToPatch> patches = w.takePatches();
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    w.drainInto(req, false);
    p.endpoint.commitData(req.build(), null);
    return patches;
  }

  // -------------------------------------------------------------------------------------------

  @Test
  void oneProducerOneWriterFullSession() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer producer = new TestProducer().connect(service, "app", 1001, 77).register("test");
    assertEquals("", consumer.enable(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test")));
    assertEquals(1, producer.setups.size());
    assertEquals(1, producer.starts.size());
    assertEquals(256 * 1024, producer.smb.size(), "default SMB size");
    assertEquals(4, producer.pageSizeKb);
    TestTraceWriter w = producer.writer(1, PageLayout.DIV4);
    for (int i = 0; i < 100; i++) {
      assertTrue(w.write(packet("p", i, 10)));
    }
    producer.commitAll(0);
    consumer.endpoint.disableTracing();
    assertEquals(List.of(""), consumer.disabled);
    assertEquals(1, producer.stops.size());

    Trace t = consumer.readTrace();
    List<TracePacket> data = testPackets(t);
    assertEquals(100, data.size());
    for (int i = 0; i < 100; i++) {
      TracePacket p = data.get(i);
      assertEquals(i, p.getForTesting().getSeqValue());
      assertEquals(1001, p.getTrustedUid());
      assertEquals(77, p.getTrustedPid());
      assertTrue(p.getTrustedPacketSequenceId() > ServiceLimits.SERVICE_SEQUENCE_ID);
    }
    assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceConfig));
    assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceUuid));
    assertTrue(t.getPacketList().stream().anyMatch(p -> p.hasSystemInfo() && p.getSystemInfo().hasUtsname()));
    assertTrue(t.getPacketList().stream().anyMatch(p -> p.hasClockSnapshot()
        && p.getClockSnapshot().getClocksCount() >= 2));
    assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasSynchronizationMarker));
    Set<String> events = new HashSet<>();
    for (TracePacket p : t.getPacketList()) {
      if (p.hasServiceEvent()) {
        p.getServiceEvent().getAllFields().keySet().forEach(f -> events.add(f.getName()));
        assertEquals(SERVICE_UID, p.getTrustedUid());
        assertEquals(ServiceLimits.SERVICE_SEQUENCE_ID, p.getTrustedPacketSequenceId());
      }
    }
    assertTrue(events.containsAll(Set.of("tracing_started", "all_data_sources_started",
        "tracing_disabled", "read_tracing_buffers_completed")), events.toString());
    TracePacket statsPacket = t.getPacket(t.getPacketCount() - 1);
    assertTrue(statsPacket.hasTraceStats(), "trace_stats comes last");
    TraceStats.BufferStats bs = statsPacket.getTraceStats().getBufferStats(0);
    assertEquals(256 * 1024, bs.getBufferSize());
    assertTrue(bs.getChunksWritten() > 0);
    assertEquals(bs.getChunksWritten(), bs.getChunksRead());
    assertEquals(1, statsPacket.getTraceStats().getProducersConnected());
    // Chunks went back to the producer.
    for (int page = 0; page < producer.abi.numPages(); page++) {
      assertTrue(producer.abi.isPageFree(page), "page " + page + " freed");
    }
  }

  @Test
  void manyProducersAndWritersKeepTheirSequences() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    assertEquals("", consumer.enable(config(1024, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test")));
    List<TestProducer> producers = new ArrayList<>();
    for (int p = 0; p < 3; p++) {
      TestProducer producer = new TestProducer().connect(service, "app" + p, 2000 + p, 10 + p).register("test");
      assertEquals(1, producer.starts.size(), "late producer set up and started");
      producer.writer(1, PageLayout.DIV4);
      producer.writer(2, PageLayout.DIV7);
      producers.add(producer);
    }
    for (int i = 0; i < 200; i++) {
      for (TestProducer producer : producers) {
        for (TestTraceWriter w : producer.writers) {
          assertTrue(w.write(packet("w" + w.writerId, i, i % 50)));
        }
      }
      if (i % 37 == 0) {
        producers.forEach(p -> p.commitAll(0));
      }
    }
    producers.forEach(p -> p.commitAll(0));
    Trace t = consumer.readTrace();
    Map<Integer, List<Integer>> seqs = sequences(t);
    assertEquals(6, seqs.size(), "one sequence id per {producer, writer}");
    for (List<Integer> values : seqs.values()) {
      assertEquals(200, values.size());
      assertContiguous(values);
    }
    Set<String> pairs = new HashSet<>();
    for (TracePacket p : testPackets(t)) {
      pairs.add(p.getTrustedUid() + "/" + p.getTrustedPacketSequenceId());
    }
    assertEquals(6, pairs.size());
  }

  @Test
  void packetsSpanningChunksWaitForTheirPatches() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer producer = new TestProducer().connect(service, "app", 1001, 1).register("test");
    consumer.enable(config(1024, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = producer.writer(1, PageLayout.DIV4);
    w.patchSpanningPackets = true;
    for (int i = 0; i < 20; i++) {
      assertTrue(w.write(packet("big", i, 2500))); // about 2.5 KiB over 1 KiB chunks
    }
    List<CommitDataRequest.ChunkToPatch> patches = commitHoldingPatches(producer, w);
    assertFalse(patches.isEmpty());

    Trace before = consumer.readTrace();
    assertEquals(0, testPackets(before).size(), "nothing readable past the first unpatched chunk");

    producer.endpoint.commitData(CommitDataRequest.newBuilder().addAllChunksToPatch(patches).build(), null);
    consumer.slices.clear();
    Trace after = consumer.readTrace();
    List<TracePacket> data = testPackets(after);
    assertEquals(20, data.size());
    for (int i = 0; i < 20; i++) {
      assertEquals(i, data.get(i).getForTesting().getSeqValue());
      assertEquals(2503, data.get(i).getForTesting().getStr().length());
    }
    TraceStats stats = consumer.endpoint.traceStats();
    assertEquals(patches.size(), stats.getBufferStats(0).getPatchesSucceeded());
  }

  @Test
  void ringBufferWrapKeepsTheNewestInOrder() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer producer = new TestProducer().connect(service, "app", 1001, 1).register("test");
    consumer.enable(config(16, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = producer.writer(1, PageLayout.DIV4);
    for (int i = 0; i < 2000; i++) {
      assertTrue(w.write(packet("r", i, i % 7 == 0 ? 1500 : 40)));
      if (i % 10 == 0) {
        producer.commitAll(0);
      }
    }
    producer.commitAll(0);
    Trace t = consumer.readTrace();
    List<Integer> values = sequences(t).values().iterator().next();
    assertTrue(values.size() < 2000 && values.size() > 20, "size=" + values.size());
    assertEquals(1999, values.get(values.size() - 1), "newest packet kept");
    for (int i = 1; i < values.size(); i++) {
      assertTrue(values.get(i) > values.get(i - 1), "in order, no repeats");
    }
    assertContiguous(values.subList(1, values.size())); // one wrap point: contiguous after it
    TraceStats.BufferStats bs = consumer.endpoint.traceStats().getBufferStats(0);
    assertTrue(bs.getChunksOverwritten() > 0);
    assertTrue(bs.getWriteWrapCount() > 0);
  }

  @Test
  void discardPolicyKeepsTheOldest() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer producer = new TestProducer().connect(service, "app", 1001, 1).register("test");
    consumer.enable(config(16, TraceConfig.BufferConfig.FillPolicy.DISCARD, "test"));
    TestTraceWriter w = producer.writer(1, PageLayout.DIV4);
    for (int i = 0; i < 2000; i++) {
      assertTrue(w.write(packet("d", i, 40)));
      if (i % 10 == 0) {
        producer.commitAll(0);
      }
    }
    producer.commitAll(0);
    List<Integer> values = sequences(consumer.readTrace()).values().iterator().next();
    assertEquals(0, values.get(0));
    assertContiguous(values);
    assertTrue(values.size() < 2000);
    assertTrue(consumer.endpoint.traceStats().getBufferStats(0).getChunksDiscarded() > 0);
  }

  @Test
  void flushRepliesWhenAllAckedOrOnTimeout() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer good = new TestProducer().connect(service, "good", 1, 1).register("test");
    consumer.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    List<Boolean> results = new ArrayList<>();
    consumer.endpoint.flush(1000, 0, results::add);
    assertEquals(List.of(true), results, "acked at once by CommitData(flush_request_id)");

    TestProducer silent = new TestProducer().connect(service, "silent", 2, 2).register("test");
    silent.ackFlushes = false;
    consumer.endpoint.flush(1000, 0, results::add);
    assertEquals(1, silent.flushes.size());
    runner.advance(999);
    assertEquals(1, results.size(), "still waiting for the silent producer");
    runner.advance(1);
    assertEquals(List.of(true, false), results);
    TraceStats stats = consumer.endpoint.traceStats();
    assertEquals(2, stats.getFlushesRequested());
    assertEquals(1, stats.getFlushesSucceeded());
    assertEquals(1, stats.getFlushesFailed());
    assertEquals(2, good.flushes.size());
  }

  /**
   * As upstream traced: a producer may register one name several times (two libraries of one
   * process, each with its own track_event), and a session sets up an instance of each, with equal
   * configs and distinct instance ids; a running session sets up one for a late registration too.
   * Only a non-zero descriptor id already taken on the producer is refused.
   */
  @Test
  void everyRegistrationOfANameGetsItsOwnInstance() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "two-libs", 1, 1);
    DataSourceDescriptor test = DataSourceDescriptor.newBuilder().setName("test").build();
    assertEquals("", p.endpoint.registerDataSource(test));
    assertEquals("", p.endpoint.registerDataSource(test), "id 0 (none set) is not a conflict");
    TestProducer q = new TestProducer().connect(service, "second", 1, 2);
    assertEquals("", q.endpoint.registerDataSource(test));
    consumer.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    assertEquals(2, p.setups.size(), "one instance per registration");
    assertEquals(2, p.starts.size());
    assertNotEquals(p.setups.get(0), p.setups.get(1));
    assertEquals(p.starts.get(0), p.starts.get(1), "the same config for both");
    assertEquals(1, q.setups.size());

    assertEquals("", p.endpoint.registerDataSource(test));
    assertEquals(3, p.starts.size(), "a third registration joins the running session");

    DataSourceDescriptor withId = DataSourceDescriptor.newBuilder().setName("test").setId(7).build();
    assertEquals("", p.endpoint.registerDataSource(withId));
    String error = p.endpoint.registerDataSource(withId.toBuilder().setName("other").build());
    assertTrue(error.contains("id 7") && error.contains("\"other\""), error);
    assertEquals(4, p.starts.size(), "the refused registration got no instance");
  }

  @Test
  void stopWaitsForNotifyingDataSourcesUpToTheTimeout() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "slow", 1, 1);
    p.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("test")
        .setWillNotifyOnStop(true).setWillNotifyOnStart(true).build());
    consumer.enable(TraceConfig.newBuilder(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"))
        .setDataSourceStopTimeoutMs(3000).build());
    assertEquals(3000, p.starts.get(0).getStopTimeoutMs());
    consumer.endpoint.disableTracing();
    assertEquals(List.of(), consumer.disabled);
    runner.advance(2999);
    assertEquals(List.of(), consumer.disabled);
    runner.advance(1);
    assertEquals(List.of(""), consumer.disabled);
  }

  @Test
  void stopAckEndsTheSessionAtOnce() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "slow", 1, 1);
    p.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("test").setWillNotifyOnStop(true).build());
    consumer.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    consumer.endpoint.disableTracing();
    assertEquals(List.of(), consumer.disabled);
    p.endpoint.notifyDataSourceStopped(p.setups.get(0));
    assertEquals(List.of(""), consumer.disabled);
  }

  @Test
  void durationMsFlushesAndStops() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "app", 1, 1).register("test");
    consumer.enable(TraceConfig.newBuilder(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"))
        .setDurationMs(500).build());
    TestTraceWriter w = p.writer(1, PageLayout.DIV4);
    w.write(packet("x", 0, 3)); // left in a chunk: the flush commits it
    runner.advance(499);
    assertEquals(List.of(), consumer.disabled);
    runner.advance(1);
    assertEquals(List.of(""), consumer.disabled);
    assertEquals(1, p.flushes.size());
    assertEquals(1, testPackets(consumer.readTrace()).size());
  }

  @Test
  void producerKilledMidSessionLeavesItsDataAndTheOthers() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer a = new TestProducer().connect(service, "a", 1, 1).register("test");
    TestProducer b = new TestProducer().connect(service, "b", 2, 2).register("test");
    b.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("other").build());
    consumer.enable(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter wa = a.writer(1, PageLayout.DIV4);
    TestTraceWriter wb = b.writer(1, PageLayout.DIV4);
    for (int i = 0; i < 30; i++) {
      wa.write(packet("a", i, 20));
      wb.write(packet("b", i, 20));
    }
    a.commitAll(0);
    wb.finishChunk(); // complete but never committed: scraped at disconnect
    b.endpoint.disconnect();
    assertEquals(1, service.producerCount());
    for (int i = 30; i < 40; i++) {
      wa.write(packet("a", i, 20));
    }
    a.commitAll(0);
    consumer.endpoint.disableTracing();
    assertEquals(List.of(""), consumer.disabled);
    Map<Integer, List<Integer>> seqs = sequences(consumer.readTrace());
    assertEquals(2, seqs.size());
    List<Integer> sizes = seqs.values().stream().map(List::size).sorted().toList();
    assertEquals(List.of(30, 40), sizes);
  }

  @Test
  void consumerDisconnectEndsItsSession() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "app", 1, 1).register("test");
    consumer.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    assertEquals(1, service.sessionCount());
    consumer.endpoint.disconnect();
    assertEquals(0, service.sessionCount());
    assertEquals(1, p.stops.size());
    // The producer's late commits go nowhere and harm nothing.
    TestTraceWriter w = new TestTraceWriter(p.abi, 1, p.targetBuffer(), PageLayout.DIV4);
    p.writers.add(w);
    w.write(packet("late", 0, 1));
    p.commitAll(0);
    assertEquals(0, service.producerAbiViolations());
  }

  @Test
  void packetCarryingTrustedFieldsIsDroppedAndCounted() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "liar", 1001, 1).register("test");
    consumer.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = p.writer(1, PageLayout.DIV4);
    w.write(packet("ok", 0, 1));
    w.write(TracePacket.newBuilder().setTrustedUid(0).setForTesting(TestEvent.newBuilder().setSeqValue(1)).build()
        .toByteArray());
    w.write(TracePacket.newBuilder().setTrustedPid(1).setForTesting(TestEvent.newBuilder().setSeqValue(2)).build()
        .toByteArray());
    w.write(new byte[] {0x0A, 0x05, 0x01}); // truncated length-delimited field
    w.write(packet("ok", 3, 1));
    p.commitAll(0);
    Trace t = consumer.readTrace();
    List<TracePacket> data = testPackets(t);
    assertEquals(List.of(0, 3), data.stream().map(x -> x.getForTesting().getSeqValue()).toList());
    data.forEach(x -> assertEquals(1001, x.getTrustedUid()));
    assertEquals(3, consumer.endpoint.traceStats().getInvalidPackets());
  }

  @Test
  void aProducerCannotPatchAnotherProducersChunk() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer a = new TestProducer().connect(service, "a", 1, 1).register("test");
    TestProducer b = new TestProducer().connect(service, "b", 2, 2).register("test");
    consumer.enable(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = a.writer(1, PageLayout.DIV4);
    w.patchSpanningPackets = true;
    w.write(packet("big", 0, 2500));
    List<CommitDataRequest.ChunkToPatch> patches = commitHoldingPatches(a, w);
    // b sends a's patches (same buffer, writer and chunk ids): they must not apply.
    b.endpoint.commitData(CommitDataRequest.newBuilder().addAllChunksToPatch(patches).build(), null);
    assertEquals(0, testPackets(consumer.readTrace()).size());
    assertEquals(1, consumer.endpoint.traceStats().getBufferStats(0).getPatchesFailed());
    a.endpoint.commitData(CommitDataRequest.newBuilder().addAllChunksToPatch(patches).build(), null);
    assertEquals(1, testPackets(consumer.readTrace()).size());
  }

  @Test
  void badChunkIndexesAreCountedAndHarmNoOne() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer good = new TestProducer().connect(service, "good", 1, 1).register("test");
    TestProducer bad = new TestProducer().connect(service, "bad", 2, 2).register("test");
    consumer.enable(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = good.writer(1, PageLayout.DIV4);
    w.write(packet("g", 0, 1));
    bad.endpoint.commitData(CommitDataRequest.newBuilder()
        .addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(9999).setChunk(0)
            .setTargetBuffer(bad.targetBuffer()))
        .addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(-1).setChunk(0))
        .addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(0).setChunk(20))
        .addChunksToPatch(CommitDataRequest.ChunkToPatch.newBuilder().setWriterId(0).setChunkId(1)
            .addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder().setOffset(-1)))
        .build(), null);
    assertEquals(3, service.producerAbiViolations());
    assertTrue(bad.kicked.isEmpty());
    w.write(packet("g", 1, 1));
    good.commitAll(0);
    List<Integer> values = sequences(consumer.readTrace()).values().iterator().next();
    assertEquals(List.of(0, 1), values);
    assertEquals(1, consumer.endpoint.traceStats().getPatchesDiscarded());
  }

  @Test
  void grosslyMisbehavingProducerIsDisconnected() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer good = new TestProducer().connect(service, "good", 1, 1).register("test");
    TestProducer bad = new TestProducer().connect(service, "bad", 2, 2).register("test");
    consumer.enable(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    for (int i = 0; i <= ProducerConnection.MAX_ABI_VIOLATIONS; i++) {
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(100000 + i));
    }
    bad.endpoint.commitData(req.build(), null);
    assertEquals(1, bad.kicked.size());
    assertEquals(1, service.producerCount());
    assertTrue(good.kicked.isEmpty());
    assertEquals(1, service.sessionCount());
  }

  @Test
  void writingIntoAnotherSessionsBufferIsRefused() throws IOException {
    TestConsumer c1 = new TestConsumer().connect(service, 1000);
    TestConsumer c2 = new TestConsumer().connect(service, 1000);
    TestProducer a = new TestProducer().connect(service, "a", 1, 1).register("one");
    TestProducer b = new TestProducer().connect(service, "b", 2, 2).register("two");
    c1.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "one"));
    c2.enable(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "two"));
    // b writes into a's session buffer.
    TestTraceWriter w = new TestTraceWriter(b.abi, 1, a.targetBuffer(), PageLayout.DIV4);
    b.writers.add(w);
    w.write(packet("intruder", 0, 1));
    b.commitAll(0);
    assertEquals(1, service.producerAbiViolations());
    assertEquals(0, testPackets(c1.readTrace()).size());
  }

  @Test
  void producerNameFiltersMatchExactlyOrByWholeRegex() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer exact = new TestProducer().connect(service, "com.app", 1, 1).register("test");
    TestProducer regex = new TestProducer().connect(service, "probe_42", 2, 2).register("test");
    TestProducer partial = new TestProducer().connect(service, "xprobe_42x", 3, 3).register("test");
    TestProducer other = new TestProducer().connect(service, "com.app.other", 4, 4).register("test");
    TraceConfig cfg = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(64))
        .addDataSources(TraceConfig.DataSource.newBuilder()
            .setConfig(DataSourceConfig.newBuilder().setName("test"))
            .addProducerNameFilter("com.app").addProducerNameRegexFilter("probe_\\d+"))
        .build();
    assertEquals("", consumer.enable(cfg));
    assertEquals(1, exact.starts.size());
    assertEquals(1, regex.starts.size());
    assertEquals(0, partial.starts.size());
    assertEquals(0, other.starts.size());
    assertTrue(partial.smb == null, "no SMB for a producer with no data source set up");
  }

  @Test
  void refusedConfigsChangeNothing() {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    assertTrue(consumer.enable(config(0, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "x")).contains("size_kb"));
    assertTrue(consumer.enable(config(6, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "x")).contains("size_kb"));
    TraceConfig oob = TraceConfig.newBuilder(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .addDataSources(TraceConfig.DataSource.newBuilder()
            .setConfig(DataSourceConfig.newBuilder().setName("x").setTargetBuffer(1)))
        .build();
    assertTrue(consumer.enable(oob).contains("out of bounds target_buffer"));
    TraceConfig.Builder many = TraceConfig.newBuilder();
    for (int i = 0; i < 129; i++) {
      many.addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4));
    }
    assertTrue(consumer.enable(many.build()).contains("Too many buffers"));
    assertEquals(4, consumer.disabled.size(), "each refusal reported as tracing disabled");
    assertEquals(0, service.sessionCount());

    for (int i = 0; i < ServiceLimits.MAX_SESSIONS_PER_UID; i++) {
      assertEquals("",
          new TestConsumer().connect(service, 7).enable(config(4, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER)));
    }
    assertTrue(new TestConsumer().connect(service, 7).enable(config(4, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .contains("for uid 7"));
    for (int i = 0; i < ServiceLimits.MAX_SESSIONS - ServiceLimits.MAX_SESSIONS_PER_UID; i++) {
      assertEquals("", new TestConsumer().connect(service, 100 + i)
          .enable(config(4, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER)));
    }
    assertTrue(new TestConsumer().connect(service, 99)
        .enable(config(4, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .contains("Too many concurrent tracing sessions (15)"));
  }

  @Test
  void readBuffersSlicesAndBatchesLargeReads() throws IOException {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "app", 1, 1).register("test");
    consumer.enable(config(2048, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"));
    TestTraceWriter w = p.writer(1, PageLayout.DIV1);
    for (int i = 0; i < 100; i++) {
      assertTrue(w.write(packet("big", i, 10_000)));
      p.commitAll(0);
    }
    Trace t = consumer.readTrace();
    assertEquals(100, testPackets(t).size());
    assertTrue(consumer.batches.size() > 2, "batches=" + consumer.batches.size());
    assertFalse(consumer.batches.get(consumer.batches.size() - 1));
    assertTrue(consumer.batches.subList(0, consumer.batches.size() - 1).stream().allMatch(b -> b));
  }

  @Test
  void offThreadCallsAreRefused() throws Exception {
    // The outcome is carried back to this thread: an AssertionError thrown on another thread only
    // reaches its uncaught-exception handler, and the test would pass whatever happened there.
    java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        service.connectConsumer(new TestConsumer(), 1);
        outcome.complete(null);
      } catch (Throwable e) {
        outcome.complete(e);
      }
    });
    t.start();
    t.join();
    Throwable refused = outcome.get();
    assertTrue(refused instanceof IllegalStateException, "a call off the service thread is refused: " + refused);
  }
}
