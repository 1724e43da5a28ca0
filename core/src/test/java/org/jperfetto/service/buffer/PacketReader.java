package org.jperfetto.service.buffer;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Test side of reading: drains a TraceBuffer into plain records. */
final class PacketReader {
  record Read(int producerId, int writerId, int uid, int pid, boolean dropped, int slices, byte[] data) {
    String hex() {
      return HexFormat.of().formatHex(data);
    }
  }

  private PacketReader() {}

  /** beginRead + readNextTracePacket until false. */
  static List<Read> readAll(TraceBuffer tb) {
    tb.beginRead();
    return readMore(tb);
  }

  static List<Read> readMore(TraceBuffer tb) {
    List<Read> out = new ArrayList<>();
    BufferedPacket p = new BufferedPacket();
    while (tb.readNextTracePacket(p)) {
      out.add(new Read(p.producerId(), p.writerId(), p.uid(), p.pid(), p.previousPacketDropped(),
          p.sliceCount(), p.toByteArray()));
    }
    return out;
  }
}
