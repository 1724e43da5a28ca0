package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.protos.GetTraceStatsResponse;
import org.jperfetto.protos.TraceStats;
import org.junit.jupiter.api.Test;

class TraceStatsReplyTest {
  private static TraceStats stats(int writers) {
    TraceStats.Builder t = TraceStats.newBuilder().setProducersConnected(3)
        .addBufferStats(TraceStats.BufferStats.newBuilder().setBufferSize(4096).setBytesWritten(100));
    for (long threshold : new long[] {8, 32, 128, 512, 1024, 2048, 4096, 8192}) {
      t.addChunkPayloadHistogramDef(threshold);
    }
    for (int i = 0; i < writers; i++) {
      TraceStats.WriterStats.Builder w = t.addWriterStatsBuilder().setSequenceId(1000 + i).setBuffer(0);
      for (int b = 0; b < 9; b++) {
        w.addChunkPayloadHistogramCounts(100_000 + b).addChunkPayloadHistogramSum(1_000_000_000L + b);
      }
    }
    return t.build();
  }

  @Test
  void statsThatFitAFrameAreAnsweredWhole() {
    TraceStats s = stats(100);
    assertSame(s, ConsumerPortService.traceStatsReply(s).getTraceStats());
  }

  @Test
  void thousandsOfWritersLeaveTheirHistogramsOutRatherThanFailTheCall() {
    TraceStats s = stats(5000);
    assertTrue(s.getSerializedSize() > ConsumerPortService.MAX_READ_REPLY_BYTES);
    GetTraceStatsResponse r = ConsumerPortService.traceStatsReply(s);
    assertTrue(r.getSerializedSize() <= ConsumerPortService.MAX_READ_REPLY_BYTES);
    assertEquals(0, r.getTraceStats().getWriterStatsCount());
    assertEquals(0, r.getTraceStats().getChunkPayloadHistogramDefCount());
    assertEquals(s.getBufferStatsList(), r.getTraceStats().getBufferStatsList());
    assertEquals(3, r.getTraceStats().getProducersConnected());
  }
}
