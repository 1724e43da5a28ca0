package org.jperfetto.service;

import com.google.protobuf.ByteString;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;

/**
 * Joins ReadBuffers slices back into whole packets for the sinks that need packets (the
 * compressor, the trace file), each as it would sit in a trace file: the Trace.packet preamble
 * (tag 0x0a and the length varint) then the packet bytes.
 */
abstract class PacketGlue implements SliceSink {
  private ByteString pending = ByteString.EMPTY;

  @Override
  public final void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore) {
    for (ReadBuffersResponse.Slice s : slices) {
      pending = pending.concat(s.getData());
      if (s.getLastSliceForPacket()) {
        ByteString packet = pending;
        pending = ByteString.EMPTY;
        onPacket(preamble(packet.size()), packet);
      }
    }
    onBatchEnd(hasMore);
  }

  /** Trace.packet (field 1, length-delimited) tag and the length as a varint. */
  static byte[] preamble(int length) {
    byte[] out = new byte[6];
    out[0] = 0x0a;
    int n = 1;
    int v = length;
    while ((v & ~0x7F) != 0) {
      out[n++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    out[n++] = (byte) v;
    return java.util.Arrays.copyOf(out, n);
  }

  abstract void onPacket(byte[] preamble, ByteString packet);

  abstract void onBatchEnd(boolean hasMore);
}
