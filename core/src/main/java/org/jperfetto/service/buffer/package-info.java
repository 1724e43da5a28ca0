/**
 * The service's central trace buffer: {@link org.jperfetto.service.buffer.TraceBuffer} stores
 * chunks copied out of producers' shared memory and hands whole packets to the consumer.
 *
 * <p>Used by the service's CommitData handler ({@code copyChunkUntrusted},
 * {@code tryPatchChunkContents}), its ReadBuffers handler ({@code beginRead},
 * {@code readNextTracePacket} into a reused {@link org.jperfetto.service.buffer.BufferedPacket})
 * and GetTraceStats ({@link org.jperfetto.service.buffer.TraceBufferStats}). Single-threaded: the
 * service thread only.
 */
package org.jperfetto.service.buffer;
