package org.jperfetto.tracing;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A directory only this user can enter (mode 0700), for the embedded service's sockets: another
 * user's process cannot connect to a socket inside it, whatever the socket file's own mode. It is
 * created under java.io.tmpdir, which keeps the socket paths short (sun_path holds 108 bytes).
 */
final class PrivateSocketDir implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(PrivateSocketDir.class.getName());
  /** sun_path is 108 bytes including the terminating NUL. */
  static final int MAX_SOCKET_PATH = 107;

  private final Path dir;

  private PrivateSocketDir(Path dir) {
    this.dir = dir;
  }

  static PrivateSocketDir create() throws IOException {
    Path dir = Files.createTempDirectory("jperfetto-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    return new PrivateSocketDir(dir);
  }

  Path path() {
    return dir;
  }

  /** The path of a socket named name in this directory. */
  String socket(String name) throws IOException {
    String path = dir.resolve(name).toString();
    if (path.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
      throw new IOException("socket path too long for AF_UNIX (set java.io.tmpdir to a shorter directory): " + path);
    }
    return path;
  }

  /** Removes whatever is left in the directory (the service removes its sockets itself), then it. */
  @Override
  public void close() {
    try {
      if (!Files.isDirectory(dir)) {
        return;
      }
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
        for (Path p : entries) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot remove the in-process service's directory " + dir + ": " + e.getMessage());
    }
  }
}
