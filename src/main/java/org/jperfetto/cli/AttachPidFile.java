package org.jperfetto.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.OptionalLong;

/**
 * How {@code jperfetto attach --detach PID} finds the jperfetto process attached to JVM PID in
 * JFR mode: that process writes its own pid to {@code attach-PID.pid} under the runtime directory
 * ({@code $XDG_RUNTIME_DIR/jperfetto}, else {@code /tmp/jperfetto-USER}, private to the user) and
 * removes the file when it ends; --detach sends it SIGTERM.
 */
record AttachPidFile(Path path) {
  /** The file for target pid. */
  static AttachPidFile of(long target, Map<String, String> env) {
    return new AttachPidFile(runtimeDir(env).resolve("attach-" + target + ".pid"));
  }

  static Path runtimeDir(Map<String, String> env) {
    String xdg = env.get("XDG_RUNTIME_DIR");
    if (xdg != null && !xdg.isEmpty() && Files.isDirectory(Path.of(xdg))) {
      return Path.of(xdg, "jperfetto");
    }
    return Path.of(System.getProperty("java.io.tmpdir"), "jperfetto-" + System.getProperty("user.name"));
  }

  /** Records this process as the one attached. */
  void write() throws IOException {
    Path dir = path.getParent();
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }
    Files.writeString(path, ProcessHandle.current().pid() + "\n");
  }

  /** The pid written there, if the file exists and holds one. */
  OptionalLong read() {
    try {
      return OptionalLong.of(Long.parseLong(Files.readString(path).strip()));
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /** Removes the file if it still names this process. */
  void remove() {
    if (read().orElse(-1) == ProcessHandle.current().pid()) {
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        // a stale file names a process that is gone: --detach says so
      }
    }
  }
}
