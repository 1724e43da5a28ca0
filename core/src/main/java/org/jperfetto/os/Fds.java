package org.jperfetto.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Plain file-descriptor operations. Every descriptor this package creates is close-on-exec. */
public final class Fds {
  private static final System.Logger LOG = System.getLogger(Fds.class.getName());

  private Fds() {}

  /** close(2). Not retried on EINTR (Linux has released the descriptor by then). */
  public static void close(int fd) throws ErrnoException {
    Libc.close(Scratch.get(), fd);
  }

  /** close(2), logging rather than throwing; for cleanup paths. Negative fds are ignored. */
  public static void closeQuietly(int fd) {
    if (fd < 0) {
      return;
    }
    try {
      close(fd);
    } catch (ErrnoException e) {
      LOG.log(Level.WARNING, e.getMessage());
    }
  }

  /** A close-on-exec duplicate of {@code fd} (fcntl F_DUPFD_CLOEXEC). */
  public static int dup(int fd) throws ErrnoException {
    return Libc.fcntl(Scratch.get(), fd, Libc.F_DUPFD_CLOEXEC, 0);
  }

  /** Number of descriptors this process has open, from /proc/self/fd (for leak checks). */
  public static int openFdCount() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return (int) fds.count() - 1; // the directory stream's own descriptor
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list /proc/self/fd", e);
    }
  }
}
