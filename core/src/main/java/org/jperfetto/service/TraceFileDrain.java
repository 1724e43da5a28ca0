package org.jperfetto.service;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One write_into_file drain: packets go into the consumer's file as a trace file (preamble +
 * packet each) until max_file_size_bytes would be passed (0: no limit) or a write fails; then the
 * drain stops writing and the service ends the session.
 */
final class TraceFileDrain extends PacketGlue {
  private final ConsumerEndpoint.TraceFileSink sink;
  private final long maxBytes;
  private long written;
  private boolean stopped;
  private String failure;

  TraceFileDrain(ConsumerEndpoint.TraceFileSink sink, long writtenBefore, long maxBytes) {
    this.sink = sink;
    this.written = writtenBefore;
    this.maxBytes = maxBytes;
  }

  @Override
  void onPacket(byte[] preamble, ByteString packet) {
    if (stopped) {
      return;
    }
    long size = preamble.length + (long) packet.size();
    if (maxBytes > 0 && written + size > maxBytes) {
      stopped = true;
      return;
    }
    try {
      sink.write(ByteBuffer.wrap(preamble));
      sink.write(packet.asReadOnlyByteBuffer());
      written += size;
    } catch (IOException | RuntimeException e) {
      fail(e);
    }
  }

  @Override
  void onBatchEnd(boolean hasMore) {}

  /** Writes out what the sink held back (after the drain's last packet). */
  void finish() {
    if (failure != null) {
      return;
    }
    try {
      sink.flush();
    } catch (IOException | RuntimeException e) {
      fail(e);
    }
  }

  private void fail(Exception e) {
    stopped = true;
    failure = e.getMessage() != null ? e.getMessage() : e.toString();
  }

  long bytesWritten() {
    return written;
  }

  /** The file is full or failed: nothing more is written. */
  boolean stopped() {
    return stopped;
  }

  String failure() {
    return failure;
  }
}
