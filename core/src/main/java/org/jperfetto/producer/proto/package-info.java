/**
 * Streaming protobuf encoding straight into shared-memory chunks, protozero-style, with no
 * allocation on the hot path.
 *
 * <ul>
 *   <li>{@link org.jperfetto.producer.proto.ScatteredStreamWriter}: bytes into the current range
 *       [begin, end) of a segment; asks its {@code Delegate} for the next range when full.
 *   <li>{@link org.jperfetto.producer.proto.ProtoWriter}: fields and nested messages (a stack, no
 *       object per message); nested sizes are 4 reserved bytes, backfilled, compacted to 1 byte
 *       when the message is at most 127 bytes and still contiguous in the current range.
 *   <li>{@link org.jperfetto.producer.proto.PacketFragment}: the TracePacket fragment size header
 *       (1 byte below 127 when the fragment ends in its chunk, else 4; the drop marker).
 *   <li>{@link org.jperfetto.producer.proto.PatchList}: sizes whose chunk was already handed back,
 *       for CommitData's chunks_to_patch.
 * </ul>
 *
 * <p>How a TraceWriter drives them (the same steps as upstream's TraceWriterImpl):
 *
 * <ol>
 *   <li>New packet: if fewer than 12 bytes are left in the chunk, {@code stream.extend()} (not
 *       fragmenting, so no header in the next chunk); {@code writer.endAllNested()} if the last
 *       packet was left open; {@code fragment.begin()}; count the packet in the chunk header.
 *   <li>The app appends fields through the {@code ProtoWriter}.
 *   <li>{@code getNewBuffer} while a packet is open: set the old chunk's continues-on-next flag,
 *       {@code fragment.endAtChunkBoundary()}, then {@code writer.redirectSizeFields(oldPayload,
 *       payloadBegin, payloadEnd, oldChunkId)} and set needs-patching if it returned more than 0;
 *       hand the old chunk back with the patch entries that are filled at the front. In the new
 *       chunk (packet count 1, continues-from-previous flag): {@code stream.reset(segment,
 *       payloadBegin + 4, payloadEnd)} and {@code fragment.beginContinuation(segment,
 *       payloadBegin)}. If no chunk can be had: {@code fragment.endAsDropped()} and
 *       {@code writer.discardSizeFields(...)} over the old payload.
 *   <li>End of packet: {@code writer.endAllNested()}, {@code fragment.end()}, then send the
 *       filled entries at the front of the {@code PatchList}.
 * </ol>
 *
 * <p>Field numbers are parameters: callers use the generated {@code *_FIELD_NUMBER} constants of
 * {@code org.jperfetto.protos}.
 */
package org.jperfetto.producer.proto;
