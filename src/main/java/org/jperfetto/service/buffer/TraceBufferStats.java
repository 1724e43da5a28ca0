package org.jperfetto.service.buffer;

/**
 * A snapshot of a {@link TraceBuffer}'s counters. Component names are upstream's
 * TraceStats.BufferStats fields in camel case, so the service maps them one to one.
 *
 * <p>Byte counts are of records as stored: a 16-byte record header plus the chunk payload,
 * rounded up to 16 bytes, like upstream's.
 *
 * <p>One difference: {@code chunksDiscarded} also counts, in any policy, chunks committed after
 * the reader got past them: late chunks (a later chunk of their sequence was read) and scraped
 * chunks read in part and overwritten before their final commit. Upstream would hand their
 * packets out again or out of sequence order; this buffer drops them.
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
