package org.jperfetto.service.buffer;

/**
 * A snapshot of a {@link TraceBuffer}'s counters. Component names are upstream's
 * TraceStats.BufferStats fields in camel case, so the service maps them one to one.
 *
 * <p>Byte counts are of records as stored: a 16-byte record header plus the chunk payload,
 * rounded up to 16 bytes, like upstream's.
 */
public record TraceBufferStats(
    long bufferSize,
    long bytesWritten,
    long bytesOverwritten,
    long bytesRead,
    long paddingBytesWritten,
    long paddingBytesCleared,
    long chunksWritten,
    long chunksRewritten,
    long chunksOverwritten,
    long chunksDiscarded,
    long chunksRead,
    long chunksCommittedOutOfOrder,
    long writeWrapCount,
    long patchesSucceeded,
    long patchesFailed,
    long readaheadsSucceeded,
    long readaheadsFailed,
    long abiViolations,
    long traceWriterPacketLoss) {}
