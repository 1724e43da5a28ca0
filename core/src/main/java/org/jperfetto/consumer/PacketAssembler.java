package org.jperfetto.consumer;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;

/**
 * Joins ReadBuffersResponse slices into whole packets: a packet ends at a slice with
 * last_slice_for_packet set, possibly several responses later. A packet of one slice is handed on
 * as that slice, without copying. Bounded: a packet that grows past {@link #MAX_PACKET_BYTES}
 * without ending is a protocol error.
 */
final class PacketAssembler {
  /** Larger than any packet a service hands out (chunks are at most 64 KiB, packets span them). */
  static final int MAX_PACKET_BYTES = 256 * 1024 * 1024;

  private final TracePacketSink sink;
  private final List<ByteString> pending = new ArrayList<>();
  private long pendingBytes;
  private long packets;

  PacketAssembler(TracePacketSink sink) {
    this.sink = sink;
  }

  /** Feeds one response's slices. */
  void accept(ReadBuffersResponse response) throws IOException {
    for (ReadBuffersResponse.Slice slice : response.getSlicesList()) {
      ByteString data = slice.getData();
      if (pending.isEmpty() && slice.getLastSliceForPacket()) {
        sink.onPacket(List.of(data), data.size());
        packets++;
        continue;
      }
      pendingBytes += data.size();
      if (pendingBytes > MAX_PACKET_BYTES) {
        throw new IOException("packet larger than " + MAX_PACKET_BYTES + " bytes in ReadBuffers: "
            + pendingBytes + " bytes in " + (pending.size() + 1) + " slices without an end");
      }
      pending.add(data);
      if (slice.getLastSliceForPacket()) {
        sink.onPacket(List.copyOf(pending), (int) pendingBytes);
        packets++;
        pending.clear();
        pendingBytes = 0;
      }
    }
  }

  /** Slices received after the last packet end: a packet the service never finished. */
  int danglingSlices() {
    return pending.size();
  }

  long packets() {
    return packets;
  }
}
