package org.jperfetto.service.buffer;

/**
 * A snapshot of a {@link TraceBuffer}'s counters. Component names are upstream's
 * TraceStats.BufferStats fields in camel case, so the service maps them one to one.
 *
 * <p>Byte counts are of records as stored: a 16-byte record header plus the chunk payload,
 * rounded up to 16 bytes, like upstream's.
 *
 * <p>As in upstream's TraceBufferV2 (not V1), {@code chunksDiscarded} also counts, in any
 * policy, chunks committed after the reader got to them: late chunks (a later chunk of their
 * sequence was read) and chunks read and overwritten before a new commit of them. V1 would hand
 * their packets out again or out of sequence order. (The unread rest of a scraped chunk that was
 * overwritten while being read is admitted again, as V2 does.)
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
