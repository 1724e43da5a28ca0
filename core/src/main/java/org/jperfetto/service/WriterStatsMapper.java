package org.jperfetto.service;

import java.util.Arrays;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.buffer.TraceBuffer;
import org.jperfetto.service.buffer.WriterStats;

/**
 * TraceStats' chunk usage histograms, as upstream writes them: the bucket thresholds once
 * (chunk_payload_histogram_def, without the unbounded last bucket) when any writer has one, then
 * per writer of each of the session's buffers its sequence id, the buffer's index in the session
 * and the counts and sums of every bucket.
 */
final class WriterStatsMapper {
  private WriterStatsMapper() {}

  static void addTo(TraceStats.Builder t, ServiceSession s, TraceBuffer[] sessionBuffers) {
    boolean defined = false;
    for (int i = 0; i < sessionBuffers.length; i++) {
      TraceBuffer b = sessionBuffers[i];
      if (b == null || b.writerStats().isEmpty()) {
        continue;
      }
      if (!defined) {
        Arrays.stream(WriterStats.THRESHOLDS).forEach(t::addChunkPayloadHistogramDef);
        defined = true;
      }
      int index = i;
      b.writerStats().forEach((producer, writer, counts, sums) -> {
        TraceStats.WriterStats.Builder w = t.addWriterStatsBuilder()
            .setSequenceId(s.sequenceIdFor(producer, writer)).setBuffer(index);
        Arrays.stream(counts).forEach(w::addChunkPayloadHistogramCounts);
        Arrays.stream(sums).forEach(w::addChunkPayloadHistogramSum);
      });
    }
  }
}
