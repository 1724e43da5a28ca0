package org.jperfetto.ipc.wire;

import org.jperfetto.protos.IPCFrame;

/** Receives the frames a {@link FrameReader} decodes, in stream order. */
@FunctionalInterface
public interface FrameSink {
  /**
   * One decoded frame.
   *
   * @param frame the frame
   * @param fd the file descriptor that arrived with this frame's first byte, or -1. Ownership passes
   *     to the sink: it must close it or hand it on.
   */
  void onFrame(IPCFrame frame, int fd);

  /**
   * Offered each complete frame that came without an fd before it is decoded: a sink that serves it
   * from the bytes in place returns true and {@link #onFrame} is not called for it. The bytes are
   * the reader's and valid only during the call.
   *
   * @param buffer the reader's buffer
   * @param offset where the frame's payload (after the length prefix) starts
   * @param length the payload's size, > 0
   */
  default boolean onRawFrame(java.lang.foreign.MemorySegment buffer, long offset, int length) {
    return false;
  }
}
