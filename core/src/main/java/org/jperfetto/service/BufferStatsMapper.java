package org.jperfetto.service;

import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.buffer.TraceBufferStats;

/** TraceBuffer counters to TraceStats.BufferStats, field for field. */
final class BufferStatsMapper {
  private BufferStatsMapper() {}

  static TraceStats.BufferStats toProto(TraceBufferStats s) {
    return TraceStats.BufferStats.newBuilder()
        .setBufferSize(s.bufferSize())
        .setBytesWritten(s.bytesWritten())
        .setBytesOverwritten(s.bytesOverwritten())
        .setBytesRead(s.bytesRead())
        .setPaddingBytesWritten(s.paddingBytesWritten())
        .setPaddingBytesCleared(s.paddingBytesCleared())
        .setChunksWritten(s.chunksWritten())
        .setChunksRewritten(s.chunksRewritten())
        .setChunksOverwritten(s.chunksOverwritten())
        .setChunksDiscarded(s.chunksDiscarded())
        .setChunksRead(s.chunksRead())
        .setChunksCommittedOutOfOrder(s.chunksCommittedOutOfOrder())
        .setWriteWrapCount(s.writeWrapCount())
        .setPatchesSucceeded(s.patchesSucceeded())
        .setPatchesFailed(s.patchesFailed())
        .setReadaheadsSucceeded(s.readaheadsSucceeded())
        .setReadaheadsFailed(s.readaheadsFailed())
        .setAbiViolations(s.abiViolations())
        .setTraceWriterPacketLoss(s.traceWriterPacketLoss())
        .build();
  }
}
