package org.jperfetto.consumer;

import com.google.protobuf.CodedInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.wire.TracePacketRecord;

/**
 * Reads a trace file (a sequence of Trace.packet fields, as {@link TraceFileWriter} writes them) as
 * a stream, one packet at a time, other fields skipped: a trace of any size in the memory of its
 * largest packet.
 */
public final class TraceFileReader {
  /** Takes one packet of the file, in file order. */
  @FunctionalInterface
  public interface PacketHandler {
    void onPacket(TracePacket packet);
  }

  private TraceFileReader() {}

  /** Hands every packet of in to handler, in order. */
  public static void forEachPacket(InputStream in, PacketHandler handler) throws IOException {
    CodedInputStream cis = CodedInputStream.newInstance(in, 1 << 16);
    cis.setSizeLimit(Integer.MAX_VALUE);
    while (!cis.isAtEnd()) {
      int tag = cis.readTag();
      if (tag != TracePacketRecord.PACKET_TAG) {
        cis.skipField(tag);
        continue;
      }
      TracePacket p = TracePacket.parseFrom(cis.readBytes());
      cis.resetSizeCounter();
      handler.onPacket(p);
    }
  }
}
