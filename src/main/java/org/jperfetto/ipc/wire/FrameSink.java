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
}
