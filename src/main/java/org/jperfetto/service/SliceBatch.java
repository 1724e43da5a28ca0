package org.jperfetto.service;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.service.buffer.BufferedPacket;

/**
 * Packets on their way to a consumer, as ReadBuffersResponse slices: every slice at most
 * {@link TracingService#MAX_SLICE_SIZE} bytes, the last slice of each packet marked
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
   * A producer packet: its bytes as the buffer holds them, then the trusted fields appended as
   * one more slice (a protobuf message may be extended by appending fields; a later value wins).
   */
  void addProducerPacket(BufferedPacket packet, int uid, int pid, int sequenceId) {
    for (int i = 0; i < packet.sliceCount(); i++) {
      if (packet.sliceLength(i) > 0) {
        addBytes(ByteString.copyFrom(packet.slice(i).asByteBuffer()), false);
      }
    }
    addBytes(ByteString.copyFrom(trustedFields(uid, pid, sequenceId, packet.previousPacketDropped())), true);
  }

  private void addBytes(ByteString data, boolean lastOfPacket) {
    int max = TracingService.MAX_SLICE_SIZE;
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

  /** TracePacket fields trusted_uid (3), trusted_packet_sequence_id (10), trusted_pid (79), previous_packet_dropped (42). */
  static byte[] trustedFields(int uid, int pid, int sequenceId, boolean previousPacketDropped) {
    byte[] out = new byte[40];
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    try {
      o.writeInt32(3, uid);
      o.writeUInt32(10, sequenceId);
      if (pid != 0) {
        o.writeInt32(79, pid);
      }
      if (previousPacketDropped) {
        o.writeUInt32(42, 1);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // 40 bytes always fit: 11 + 6 + 12 + 3
    }
    return java.util.Arrays.copyOf(out, o.getTotalBytesWritten());
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
