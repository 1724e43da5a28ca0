package org.jperfetto.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.Fds;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;

/** A blocking test peer that writes and reads raw frames, to poke at a host's protocol handling. */
public final class RawPeer implements AutoCloseable {
  final UnixSocket socket;
  private final Arena arena = Arena.ofConfined();
  private final MemorySegment out = arena.allocate(Frames.MAX_FRAME_SIZE + 16);
  private final FrameReader reader = new FrameReader(Fds::closeQuietly);
  private final ArrayDeque<IPCFrame> frames = new ArrayDeque<>();
  private final ArrayDeque<Integer> fds = new ArrayDeque<>();

  public RawPeer(String path) throws IOException {
    this(UnixSocket.connect(path));
  }

  /** Over an already connected socket, which the peer then owns. */
  RawPeer(UnixSocket connected) {
    socket = connected;
  }

  public void send(IPCFrame frame) throws IOException {
    sendBytes(Frames.encode(frame), -1);
  }

  void sendBytes(byte[] bytes, int fd) throws IOException {
    MemorySegment.copy(bytes, 0, out, ValueLayout.JAVA_BYTE, 0, bytes.length);
    long sent = 0;
    while (sent < bytes.length) {
      long n = socket.send(out, sent, bytes.length - sent, sent == 0 ? fd : -1);
      if (n < 0) {
        throw new IOException("blocking socket would block");
      }
      sent += n;
    }
  }

  /** The next frame; null on EOF. */
  public IPCFrame next() throws IOException {
    int[] fd = {-1};
    while (frames.isEmpty()) {
      long n = socket.receive(reader.receiveBuffer(), reader.receiveOffset(), reader.receiveSpace(), fd);
      if (n == 0) {
        return null;
      }
      if (!reader.endReceive((int) n, fd[0], (f, d) -> {
        frames.add(f);
        fds.add(d);
      })) {
        throw new IOException(reader.failure().message());
      }
    }
    int fd0 = fds.poll();
    if (fd0 >= 0) {
      Fds.closeQuietly(fd0);
    }
    return frames.poll();
  }

  /** Reads until EOF; true if the host closed the connection. Throws if frames come instead. */
  boolean awaitEof() throws IOException {
    IPCFrame frame = next();
    if (frame != null) {
      throw new AssertionError("expected EOF, got " + frame);
    }
    return true;
  }

  @Override
  public void close() {
    socket.close();
    reader.close();
    arena.close();
  }
}
