/**
 * The protobuf wire toolkit, on the bottom floor (java.base only, usable by every package): what a
 * hand-written encoder or decoder needs to know about the wire format, said once.
 *
 * <ul>
 *   <li>{@link org.jperfetto.wire.Varints}: varint sizes and bytes (into arrays, into segments,
 *       packed into longs for one-store writes), the 4-byte redundant form that sizes written after
 *       the fact take, and bounded reads of short untrusted varints.
 *   <li>{@link org.jperfetto.wire.ProtoWire}: wire types, tags, zigzag and the sizes of whole
 *       fields.
 *   <li>{@link org.jperfetto.wire.ProtoCursor}: an allocation-free, bounds-checked reader over a
 *       range of a segment.
 *   <li>{@link org.jperfetto.wire.TracePacketRecord}: a packet's framing in a trace file.
 * </ul>
 *
 * <p>Field numbers are not here: callers take them from the generated {@code *_FIELD_NUMBER}
 * constants of {@code org.jperfetto.protos} (the messages' tags for CommitData and the IPC frame
 * are in {@code org.jperfetto.ipc.wire}, beside their encoders and decoders).
 */
package org.jperfetto.wire;
