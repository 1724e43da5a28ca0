package org.jperfetto.service;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Packets on their way to a consumer, as ReadBuffersResponse slices: every slice at most
 * {@link ServiceLimits#MAX_SLICE_SIZE} bytes, the last slice of each packet marked
 * last_slice_for_packet.
 */
final class SliceBatch {
  private final List<ReadBuffersResponse.Slice> slices = new ArrayList<>();
  private long bytes;

  /** A whole packet the service wrote. */
  void addPacket(byte[] packet) {
    addBytes(ByteString.copyFrom(packet), true);
  }

  /**
   * A producer packet: its bytes as the buffer holds them, then the trusted fields appended (a
   * protobuf message may be extended by appending fields; a later value wins), copied once into
   * one array that becomes the packet's slice (or slices, past {@link ServiceLimits#MAX_SLICE_SIZE}).
   */
  void addProducerPacket(BufferedPacket packet, int uid, int pid, int sequenceId) {
    boolean dropped = packet.previousPacketDropped();
    int size = 0;
    for (int i = 0; i < packet.sliceCount(); i++) {
      size += packet.sliceLength(i);
    }
    int machine = packet.machineId();
    int trusted = trustedFieldsSize(uid, pid, machine, sequenceId, dropped);
    byte[] out = new byte[size + trusted];
    int at = 0;
    for (int i = 0; i < packet.sliceCount(); i++) {
      int n = packet.sliceLength(i);
      MemorySegment.copy(packet.segment(), ValueLayout.JAVA_BYTE, packet.sliceOffset(i), out, at, n);
      at += n;
    }
    writeTrustedFields(out, at, uid, pid, machine, sequenceId, dropped);
    addBytes(UnsafeByteOperations.unsafeWrap(out), true); // out is never written again
  }

  private void addBytes(ByteString data, boolean lastOfPacket) {
    int max = ServiceLimits.MAX_SLICE_SIZE;
    for (int at = 0; at < data.size() || at == 0; at += max) {
      int end = Math.min(data.size(), at + max);
      slices.add(ReadBuffersResponse.Slice.newBuilder().setData(data.substring(at, end))
          .setLastSliceForPacket(lastOfPacket && end == data.size()).build());
      if (end == data.size()) {
        break;
      }
    }
    bytes += data.size();
  }

  /**
   * TracePacket fields trusted_uid (3), trusted_packet_sequence_id (10), trusted_pid (79),
   * machine_id (98, for a producer on another machine) and previous_packet_dropped (42).
   */
  static byte[] trustedFields(int uid, int pid, int machineId, int sequenceId, boolean previousPacketDropped) {
    byte[] out = new byte[trustedFieldsSize(uid, pid, machineId, sequenceId, previousPacketDropped)];
    writeTrustedFields(out, 0, uid, pid, machineId, sequenceId, previousPacketDropped);
    return out;
  }

  private static final int TAG_UID = ProtoWire.varIntTag(TracePacket.TRUSTED_UID_FIELD_NUMBER);
  private static final int TAG_SEQUENCE_ID = ProtoWire.varIntTag(TracePacket.TRUSTED_PACKET_SEQUENCE_ID_FIELD_NUMBER);
  private static final int TAG_PID = ProtoWire.varIntTag(TracePacket.TRUSTED_PID_FIELD_NUMBER);
  private static final int TAG_MACHINE_ID = ProtoWire.varIntTag(TracePacket.MACHINE_ID_FIELD_NUMBER);
  private static final int TAG_DROPPED = ProtoWire.varIntTag(TracePacket.PREVIOUS_PACKET_DROPPED_FIELD_NUMBER);

  private static int trustedFieldsSize(int uid, int pid, int machineId, int sequenceId, boolean dropped) {
    return ProtoWire.taggedVarIntSize(TAG_UID, uid)
        + ProtoWire.taggedVarIntSize(TAG_SEQUENCE_ID, Integer.toUnsignedLong(sequenceId))
        + (pid != 0 ? ProtoWire.taggedVarIntSize(TAG_PID, pid) : 0)
        + (machineId != 0 ? ProtoWire.taggedVarIntSize(TAG_MACHINE_ID, Integer.toUnsignedLong(machineId)) : 0)
        + (dropped ? ProtoWire.taggedVarIntSize(TAG_DROPPED, 1) : 0);
  }

  /** Writes the trusted fields at out[at..], as protobuf-java's writeInt32/writeUInt32/writeBool would. */
  private static void writeTrustedFields(byte[] out, int at, int uid, int pid, int machineId, int sequenceId,
      boolean dropped) {
    at = Varints.put(out, at, TAG_UID);
    at = Varints.put(out, at, uid); // int32: a negative value is sign-extended to 10 bytes
    at = Varints.put(out, at, TAG_SEQUENCE_ID);
    at = Varints.put(out, at, Integer.toUnsignedLong(sequenceId));
    if (pid != 0) {
      at = Varints.put(out, at, TAG_PID);
      at = Varints.put(out, at, pid);
    }
    if (machineId != 0) {
      at = Varints.put(out, at, TAG_MACHINE_ID);
      at = Varints.put(out, at, Integer.toUnsignedLong(machineId));
    }
    if (dropped) {
      at = Varints.put(out, at, TAG_DROPPED);
      Varints.put(out, at, 1);
    }
  }

  long bytes() {
    return bytes;
  }

  boolean isEmpty() {
    return slices.isEmpty();
  }

  /** The slices so far; the batch starts over empty. */
  List<ReadBuffersResponse.Slice> take() {
    List<ReadBuffersResponse.Slice> out = List.copyOf(slices);
    slices.clear();
    bytes = 0;
    return out;
  }
}
