package org.jperfetto.service;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.util.zip.Deflater;

/**
 * Compression (TraceConfig compression_type DEFLATE or compression.deflate): packets are
 * gathered as a serialized Trace (preamble + packet each), deflated in zlib format and handed on
 * as one TracePacket.compressed_packets per about {@link #MAX_INPUT} bytes of input, as upstream's
 * zlib compressor does.
 */
final class DeflatingSink extends PacketGlue {
  /** Input bytes per compressed packet. */
  static final int MAX_INPUT = 512 * 1024;

  private final SliceSink downstream;
  private final ServicePackets packets;
  private final ByteArrayOutputStream input = new ByteArrayOutputStream();
  private final SliceBatch out = new SliceBatch();

  DeflatingSink(SliceSink downstream, ServicePackets packets) {
    this.downstream = downstream;
    this.packets = packets;
  }

  @Override
  void onPacket(byte[] preamble, ByteString packet) {
    input.writeBytes(preamble);
    input.writeBytes(packet.toByteArray());
    if (input.size() >= MAX_INPUT) {
      compress();
    }
  }

  @Override
  void onBatchEnd(boolean hasMore) {
    if (!hasMore) {
      compress();
      downstream.onTraceData(out.take(), false);
    } else if (!out.isEmpty()) {
      downstream.onTraceData(out.take(), true);
    }
  }

  private void compress() {
    if (input.size() == 0) {
      return;
    }
    out.addPacket(packets.compressed(deflate(input.toByteArray())));
    input.reset();
  }

  static byte[] deflate(byte[] data) {
    Deflater d = new Deflater(Deflater.BEST_COMPRESSION);
    try {
      d.setInput(data);
      d.finish();
      ByteArrayOutputStream o = new ByteArrayOutputStream(data.length / 4 + 64);
      byte[] buf = new byte[64 * 1024];
      while (!d.finished()) {
        o.write(buf, 0, d.deflate(buf));
      }
      return o.toByteArray();
    } finally {
      d.end();
    }
  }
}
