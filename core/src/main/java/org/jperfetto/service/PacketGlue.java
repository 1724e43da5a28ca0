package org.jperfetto.service;

import com.google.protobuf.ByteString;
import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.wire.TracePacketRecord;

/**
 * Joins ReadBuffers slices back into whole packets for the sinks that need packets (the
 * compressor, the trace file), each as it would sit in a trace file: its
 * {@link TracePacketRecord} header (the preamble) then the packet bytes.
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
        onPacket(TracePacketRecord.header(packet.size()), packet);
      }
    }
    onBatchEnd(hasMore);
  }

  abstract void onPacket(byte[] preamble, ByteString packet);

  abstract void onBatchEnd(boolean hasMore);
}
