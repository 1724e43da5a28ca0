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
 * {@link ConsumerEndpoint.TraceFileSink}. The received fd is reopened through /proc/self/fd for
 * appending (so the JDK's FileChannel does the writing, retries included) and then closed.
 */
public final class FdTraceFileSink implements ConsumerEndpoint.TraceFileSink, AutoCloseable {
  private final FileChannel channel;
  private long bytesWritten;

  private FdTraceFileSink(FileChannel channel) {
    this.channel = channel;
  }

  /**
   * Takes ownership of fd (closed before returning, whatever happens).
   *
   * @throws IOException if fd is not a file this process may write (a pipe or socket works too)
   */
  public static FdTraceFileSink adopt(int fd) throws IOException {
    try {
      return new FdTraceFileSink(FileChannel.open(Path.of("/proc/self/fd/" + fd),
          StandardOpenOption.WRITE, StandardOpenOption.APPEND));
    } catch (IOException e) {
      throw new IOException("cannot reopen the trace file fd " + fd + " for writing: " + e.getMessage(), e);
    } finally {
      Fds.closeQuietly(fd);
    }
  }

  @Override
  public synchronized void write(ByteBuffer data) throws IOException {
    while (data.hasRemaining()) {
      bytesWritten += channel.write(data);
    }
  }

  public synchronized long bytesWritten() {
    return bytesWritten;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
