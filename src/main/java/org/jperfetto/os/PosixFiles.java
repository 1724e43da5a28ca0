package org.jperfetto.os;

import java.lang.foreign.Arena;

/** File operations java.nio.file cannot do on a socket file. */
public final class PosixFiles {
  private PosixFiles() {}

  /**
   * chmod(2), e.g. {@code chmod("/tmp/perfetto-producer", 0666)} so other users' producers can
   * connect. Follows symlinks, like the command.
   */
  public static void chmod(String path, int mode) throws ErrnoException {
    if (path.indexOf('\0') >= 0) {
      throw new ErrnoException("chmod", Errno.EINVAL, path.replace('\0', '?'));
    }
    try (Arena arena = Arena.ofConfined()) {
      Libc.chmod(Scratch.get(), arena.allocateFrom(path), mode, path);
    }
  }
}
