package org.jperfetto.consumer;

import com.google.protobuf.ByteString;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import org.jperfetto.wire.TracePacketRecord;

/**
 * Writes packets in the Perfetto trace file format, each as a {@link TracePacketRecord} (field 1
 * of {@code perfetto.protos.Trace}). The slices of a packet are written as they are, never joined
 * first.
 *
 * <p>Single writer: {@link #onPacket} from one thread at a time. The counters may be read from
 * any thread.
 */
public final class TraceFileWriter implements TracePacketSink, AutoCloseable {
  private static final int BUFFER_BYTES = 64 * 1024;

  private final OutputStream out;
  private final byte[] preamble = new byte[TracePacketRecord.MAX_HEADER_SIZE];
  private volatile long bytesWritten;
  private volatile long packetsWritten;

  /** Writes to {@code out}, buffered; {@link #close()} closes it. */
  public TraceFileWriter(OutputStream out) {
    this.out = new BufferedOutputStream(out, BUFFER_BYTES);
  }

  @Override
  public void onPacket(List<ByteString> slices, int size) throws IOException {
    int n = TracePacketRecord.putHeader(preamble, 0, size);
    out.write(preamble, 0, n);
    long written = 0;
    for (int i = 0; i < slices.size(); i++) {
      ByteString slice = slices.get(i);
      slice.writeTo(out);
      written += slice.size();
    }
    if (written != size) {
      throw new IOException("packet size mismatch: declared=" + size + " slices=" + written);
    }
    bytesWritten += n + written;
    packetsWritten++;
  }

  /** Bytes written so far, preambles included. */
  public long bytesWritten() {
    return bytesWritten;
  }

  /** Packets written so far. */
  public long packetsWritten() {
    return packetsWritten;
  }

  /** Pushes buffered bytes to the underlying stream. */
  public void flush() throws IOException {
    out.flush();
  }

  /** Flushes and closes the underlying stream. */
  @Override
  public void close() throws IOException {
    out.close();
  }
}
