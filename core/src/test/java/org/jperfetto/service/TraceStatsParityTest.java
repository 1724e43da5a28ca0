package org.jperfetto.service;

import static org.jperfetto.service.TracingServiceTest.config;
import static org.jperfetto.service.TracingServiceTest.packet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.buffer.WriterStats;
import org.jperfetto.service.buffer.WriterStatsTestAccess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** TraceStats fields traced writes: final_flush_outcome, chunk_payload_histogram_def, writer_stats. */
class TraceStatsParityTest {
  ManualTaskRunner runner;
  TracingService service;

  @BeforeEach
  void setUp() {
    runner = new ManualTaskRunner();
    service = TracingServiceTest.newService(runner);
  }

  private static TraceStats stats(Trace t) {
    List<TracePacket> s = t.getPacketList().stream().filter(TracePacket::hasTraceStats).toList();
    return s.get(s.size() - 1).getTraceStats();
  }

  @Test
  void aSessionThatEndsByItselfRecordsItsFinalFlushAndEveryWritersChunkUsage() throws Exception {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "app", 1, 1).register("test");
    consumer.enable(TraceConfig.newBuilder(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test"))
        .setDurationMs(100).build());
    TestTraceWriter a = p.writer(1, PageLayout.DIV4);
    TestTraceWriter b = p.writer(2, PageLayout.DIV4);
    for (int i = 0; i < 20; i++) {
      a.write(packet("a", i, 100));
    }
    b.write(packet("b", 0, 3));
    runner.advance(100);
    assertEquals(List.of(""), consumer.disabled);
    TraceStats stats = stats(consumer.readTrace());

    assertEquals(TraceStats.FinalFlushOutcome.FINAL_FLUSH_SUCCEEDED, stats.getFinalFlushOutcome());
    assertEquals(Arrays.stream(WriterStats.THRESHOLDS).boxed().toList(), stats.getChunkPayloadHistogramDefList());
    assertEquals(2, stats.getWriterStatsCount(), "one entry per writer");
    long chunks = 0;
    for (TraceStats.WriterStats w : stats.getWriterStatsList()) {
      assertEquals(WriterStats.BUCKETS, w.getChunkPayloadHistogramCountsCount());
      assertEquals(WriterStats.BUCKETS, w.getChunkPayloadHistogramSumCount());
      assertEquals(0, w.getBuffer());
      assertTrue(w.getSequenceId() > 1, "a producer sequence, not the service's");
      chunks += w.getChunkPayloadHistogramCountsList().stream().mapToLong(Long::longValue).sum();
    }
    assertTrue(chunks >= 2, "every writer's chunks are counted: " + chunks);
  }

  @Test
  void aConsumerStopLeavesTheOutcomeUnspecifiedAndHistogramsCanBeTurnedOff() throws Exception {
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer p = new TestProducer().connect(service, "app", 1, 1).register("test");
    TraceConfig cfg = config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, "test");
    consumer.enable(cfg.toBuilder().setBuiltinDataSources(TraceConfig.BuiltinDataSource.newBuilder()
        .setDisableChunkUsageHistograms(true)).build());
    TestTraceWriter a = p.writer(1, PageLayout.DIV4);
    a.write(packet("a", 0, 100));
    p.commitAll(0);
    consumer.endpoint.disableTracing();
    TraceStats stats = stats(consumer.readTrace());
    assertTrue(stats.hasFinalFlushOutcome(), "always written, as traced does");
    assertEquals(TraceStats.FinalFlushOutcome.FINAL_FLUSH_UNSPECIFIED, stats.getFinalFlushOutcome());
    assertEquals(0, stats.getWriterStatsCount());
    assertEquals(0, stats.getChunkPayloadHistogramDefCount());
  }

  @Test
  void bucketsAreUpstreamsInclusiveUpperBounds() {
    assertEquals(0, WriterStatsTestAccess.bucketOf(0));
    assertEquals(0, WriterStatsTestAccess.bucketOf(8));
    assertEquals(1, WriterStatsTestAccess.bucketOf(9));
    assertEquals(9, WriterStatsTestAccess.bucketOf(16384));
    assertEquals(10, WriterStatsTestAccess.bucketOf(16385));
  }
}
