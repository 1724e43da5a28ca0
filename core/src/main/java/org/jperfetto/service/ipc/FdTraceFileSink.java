package org.jperfetto.service.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.jperfetto.os.Fds;
import org.jperfetto.service.ConsumerEndpoint;

/**
 * The file a consumer passed with EnableTracing (write_into_file without output_path), as a
 * {@link ConsumerEndpoint.TraceFileSink}. A pipe is written by a {@link PipeWriter}, so a reader
 * that stops never blocks the service. The received fd is reopened through /proc/self/fd for
 * appending (so the JDK's FileChannel does the writing, retries included) and then closed. A
 * regular file is reopened for reading and writing (writes go on at its end), so a clone of its
 * session can copy it ({@link #copyTo}).
 *
 * <p>Writes are gathered in a 1 MiB buffer and go out when it fills and at {@link #flush()} (the
 * service flushes after each periodic drain): a trace is mostly packets of tens of bytes, and one
 * write(2) per packet cost jtraced eight times traced's CPU per byte written.
 */
public final class FdTraceFileSink implements ConsumerEndpoint.TraceFileSink, AutoCloseable {
  private static final int COPY_BYTES = 64 * 1024;
  private static final int S_IFMT = 0170000;
  private static final int S_IFIFO = 0010000;
  static final int BUFFER_BYTES = 1 << 20;
  /** Written but not yet passed to the file (filled from position 0, flipped to write). */
  private final ByteBuffer pending = ByteBuffer.allocateDirect(BUFFER_BYTES);
  private final FileChannel channel;
  /** For a pipe: what writes into it, off the service thread; null otherwise. */
  private final PipeWriter pipe;
  /** A regular file opened for reading too: a clone of its session can copy it. */
  private final boolean readable;
  /** What the fd pointed at (its /proc/self/fd link), for error messages. */
  private final String name;
  private long bytesWritten;

  private FdTraceFileSink(FileChannel channel, boolean readable, String name, boolean pipe) {
    this.channel = channel;
    this.readable = readable;
    this.name = name;
    this.pipe = pipe ? new PipeWriter(channel, name) : null;
  }

  /**
   * Takes ownership of fd (closed before returning, whatever happens).
   *
   * @throws IOException if fd is not a file this process may write (a pipe or socket works too)
   */
  public static FdTraceFileSink adopt(int fd) throws IOException {
    Path path = Path.of("/proc/self/fd/" + fd);
    try {
      return open(path, nameOf(path, fd));
    } catch (IOException e) {
      throw new IOException("cannot reopen the trace file fd " + fd + " for writing: " + e.getMessage(), e);
    } finally {
      Fds.closeQuietly(fd);
    }
  }

  /** Opens path (a file, a device, or a pipe, which {@link PipeWriter} writes into); name is for errors. */
  static FdTraceFileSink open(Path path, String name) throws IOException {
    if (java.nio.file.Files.isRegularFile(path)) {
      try {
        // one channel for both; writes start at the end, as appending would
        FileChannel rw = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        rw.position(rw.size());
        return new FdTraceFileSink(rw, true, name, false);
      } catch (IOException notReadable) {
        // write-only for us: fine for tracing; only a clone of the session cannot copy it
      }
    }
    return new FdTraceFileSink(FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
        false, name, isFifo(path));
  }

  /** Whether path is a pipe (S_IFIFO); a device such as /dev/full is written directly, errors and all. */
  private static boolean isFifo(Path path) {
    try {
      int mode = (Integer) java.nio.file.Files.getAttribute(path, "unix:mode");
      return (mode & S_IFMT) == S_IFIFO;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  @Override
  public synchronized void write(ByteBuffer data) throws IOException {
    if (data.remaining() > pending.remaining()) {
      flush();
      if (data.remaining() > pending.capacity() / 2) {
        writeFully(data); // large: straight to the file
        return;
      }
    }
    pending.put(data);
  }

  @Override
  public synchronized void flush() throws IOException {
    if (pending.position() == 0) {
      return;
    }
    pending.flip();
    try {
      writeFully(pending);
    } finally {
      pending.clear();
    }
  }

  private void writeFully(ByteBuffer data) throws IOException {
    if (pipe != null) {
      bytesWritten += data.remaining();
      pipe.write(data);
      return;
    }
    try {
      while (data.hasRemaining()) {
        bytesWritten += channel.write(data);
      }
    } catch (IOException e) {
      throw new IOException("writing the trace file " + name + " failed after " + bytesWritten
          + " bytes: " + e.getMessage(), e);
    }
  }

  private static String nameOf(Path fdLink, int fd) {
    try {
      return java.nio.file.Files.readSymbolicLink(fdLink).toString();
    } catch (IOException | RuntimeException e) {
      return "(fd " + fd + ")";
    }
  }

  /** Copies the file from its start to its current end (what was written, flushed first) into target. */
  @Override
  public synchronized long copyTo(ConsumerEndpoint.TraceFileSink target) throws IOException {
    if (!readable) {
      throw new IOException("the trace file cannot be read back (not a regular readable file)");
    }
    flush();
    long end = channel.position();
    ByteBuffer buf = ByteBuffer.allocate(COPY_BYTES);
    long pos = 0;
    while (pos < end) {
      buf.clear().limit((int) Math.min(COPY_BYTES, end - pos));
      int n = channel.read(buf, pos);
      if (n < 0) {
        break; // truncated under us: copy what there was
      }
      pos += n;
      target.write(buf.flip());
    }
    target.flush();
    return pos;
  }

  public synchronized long bytesWritten() {
    return bytesWritten;
  }

  /** Flushes what is held back, then closes the file. */
  @Override
  public synchronized void close() throws IOException {
    try {
      flush();
    } finally {
      if (pipe != null) {
        pipe.close(); // the writer thread closes the channel once the reader took the rest
      } else {
        channel.close();
      }
    }
  }

  /** For a pipe: whether its writer has written everything and closed it (tests). */
  synchronized boolean pipeFinished() {
    return pipe == null || pipe.finished();
  }
}
