package org.jperfetto.consumer;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Finds the fd number of a file this process opened, for passing it to the service
 * ({@link TracingConsumer#enableTracing(org.jperfetto.protos.TraceConfig, int)}): the JDK does not
 * expose it, so the fds in {@code /proc/self/fd} are matched against the file's identity (device
 * and inode). Linux only.
 */
public final class OutputFds {
  private static final Path PROC_FDS = Path.of("/proc/self/fd");

  private OutputFds() {}

  /**
   * The fd of {@code channel}, which must be open on {@code file} and be this process's only open
   * file description of it that is writable (open it once).
   *
   * @throws IOException if no fd of this process refers to {@code file}
   */
  public static int fdOf(FileChannel channel, Path file) throws IOException {
    if (!channel.isOpen()) {
      throw new IOException("channel closed: " + file);
    }
    Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    if (key == null) {
      throw new IOException("no file identity for " + file);
    }
    int best = -1;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(PROC_FDS)) {
      for (Path fd : fds) {
        int n;
        try {
          n = Integer.parseInt(fd.getFileName().toString());
        } catch (NumberFormatException e) {
          continue;
        }
        try {
          if (key.equals(Files.readAttributes(fd, BasicFileAttributes.class).fileKey()) && n > best) {
            best = n; // the newest of several (e.g. the directory stream's own fd never matches)
          }
        } catch (IOException e) {
          // closed since it was listed, or not a file: not ours
        }
      }
    }
    if (best < 0) {
      throw new IOException("no open fd refers to " + file);
    }
    return best;
  }
}
