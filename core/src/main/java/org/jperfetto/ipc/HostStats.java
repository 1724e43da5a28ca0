package org.jperfetto.ipc;

/**
 * Counters of an {@link IpcHost}, as seen from any thread (each value is read separately).
 *
 * @param connections connections open now
 * @param accepted connections accepted since start
 * @param dropped connections the host closed on error (too-large or malformed frame, send buffer
 *     overflow, socket error), not counting orderly peer disconnects
 * @param framesTooLarge peers dropped for a frame over the 128 KiB cap
 * @param malformedFrames peers dropped for a frame that did not parse
 * @param sendOverflows peers dropped for not draining their replies
 * @param invocations InvokeMethod requests dispatched to handlers
 * @param rejectedRequests requests answered with a failure because the service, method or frame
 *     type was unknown
 * @param acceptFailures accept calls that failed (e.g. EMFILE), each pausing the listener a while
 * @param sendTimeouts peers dropped for leaving replies unsent past the send timeout
 * @param receives socket reads that brought bytes: one can bring several requests (a peer that
 *     sends faster than the loop reads), or part of one
 * @param readCapHits readiness events that ended with the connection's reads used up and its peer
 *     possibly still sending (see {@link IpcHost#readsPerEvent})
 */
public record HostStats(int connections, long accepted, long dropped, long framesTooLarge,
    long malformedFrames, long sendOverflows, long invocations, long rejectedRequests,
    long acceptFailures, long sendTimeouts, long receives, long readCapHits) {}
