package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jperfetto.testing.ChildJvm;

/** Sealed memfds: seals, sizes, and a mapping shared with another thread and another JVM. */
@Timeout(60)
class MemFdIT {
  private static final int SMB_SEALS = MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL;
  private static final long SIZE = 64 * 1024;

  @Test
  void sealedMemfdCannotGrowOrShrinkOrTakeMoreSeals() throws IOException {
    int fd = MemFd.create("jperfetto-seal", 4096);
    try {
      assertEquals(4096, MemFd.size(fd));
      assertEquals(0, MemFd.seals(fd));
      MemFd.resize(fd, 8192); // unsealed: fine
      assertEquals(8192, MemFd.size(fd));
      MemFd.addSeals(fd, SMB_SEALS);
      assertEquals(SMB_SEALS, MemFd.seals(fd));
      assertTrue(MemFd.hasSeals(fd, MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW));
      assertFalse(MemFd.hasSeals(fd, MemFd.F_SEAL_WRITE));

      ErrnoException grow = assertThrows(ErrnoException.class, () -> MemFd.resize(fd, 16384));
      assertEquals("ftruncate", grow.call());
      assertEquals(Errno.EPERM, grow.errno());
      assertTrue(grow.getMessage().contains("EPERM"), grow.getMessage());
      assertEquals(Errno.EPERM, assertThrows(ErrnoException.class, () -> MemFd.resize(fd, 0)).errno());
      ErrnoException seal = assertThrows(ErrnoException.class, () -> MemFd.addSeals(fd, MemFd.F_SEAL_WRITE));
      assertEquals("fcntl", seal.call());
      assertEquals(Errno.EPERM, seal.errno());
      assertEquals(8192, MemFd.size(fd));
    } finally {
      Fds.close(fd);
    }
  }

  @Test
  void writeSealRefusesWritableMappingAndCannotBeSetUnderOne() throws IOException {
    int fd = MemFd.create("jperfetto-wseal", 4096);
    try (Arena arena = Arena.ofConfined()) {
      SharedMapping.map(fd, 4096, arena);
      assertEquals(Errno.EBUSY,
          assertThrows(ErrnoException.class, () -> MemFd.addSeals(fd, MemFd.F_SEAL_WRITE)).errno());
    } finally {
      Fds.close(fd);
    }
    int sealed = MemFd.create("jperfetto-wseal2", 4096);
    try (Arena arena = Arena.ofConfined()) {
      MemFd.addSeals(sealed, MemFd.F_SEAL_WRITE);
      ErrnoException e = assertThrows(ErrnoException.class, () -> SharedMapping.map(sealed, 4096, arena));
      assertEquals("mmap", e.call());
      assertEquals(Errno.EPERM, e.errno());
    } finally {
      Fds.close(sealed);
    }
  }

  @Test
  void mappingBeyondTheFileOrOfNothingIsRefused() throws IOException {
    int fd = MemFd.create("jperfetto-small", 4096);
    try (Arena arena = Arena.ofConfined()) {
      ErrnoException e = assertThrows(ErrnoException.class, () -> SharedMapping.map(fd, 8192, arena));
      assertTrue(e.getMessage().contains("beyond the file size 4096"), e.getMessage());
      assertThrows(ErrnoException.class, () -> SharedMapping.map(fd, 0, arena));
      assertEquals(Errno.EBADF, assertThrows(ErrnoException.class, () -> SharedMapping.map(-1, 4096, arena)).errno());
    } finally {
      Fds.close(fd);
    }
  }

  @Test
  void closingTheArenaUnmaps() throws IOException {
    String name = "jperfetto-unmap-" + ProcessHandle.current().pid();
    int fd = MemFd.create(name, 4096);
    try {
      Arena arena = Arena.ofShared();
      MemorySegment m = SharedMapping.map(fd, 4096, arena);
      assertEquals(4096, m.byteSize());
      assertEquals(1, mappingsNamed(name));
      arena.close();
      assertEquals(0, mappingsNamed(name));
      assertThrows(IllegalStateException.class, () -> m.get(JAVA_BYTE, 0));
    } finally {
      Fds.close(fd);
    }
  }

  static long mappingsNamed(String name) throws IOException {
    return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains("/memfd:" + name)).count();
  }

  @Test
  void sealedMemfdSentToAnotherThreadSharesWritesBothWays() throws Exception {
    String name = UnixSocketIT.abstractName();
    int fd = MemFd.create("jperfetto-smb", SIZE);
    MemFd.addSeals(fd, SMB_SEALS);
    try (UnixSocket listener = UnixSocket.listen(name, 1); Arena arena = Arena.ofShared()) {
      MemorySegment mine = SharedMapping.map(fd, SIZE, arena);
      mine.set(JAVA_LONG, 0, MemFdChild.PARENT_FIRST);
      CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
        try {
          return MemFdChild.run(name, SIZE, SMB_SEALS);
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      });
      converse(listener, fd, mine);
      assertEquals(0, other.get(30, TimeUnit.SECONDS));
    } finally {
      Fds.close(fd);
    }
  }

  @Test
  void sealedMemfdSentToAnotherJvmSharesWritesBothWays() throws Exception {
    String name = UnixSocketIT.abstractName();
    int fd = MemFd.create("jperfetto-smb-child", SIZE);
    MemFd.addSeals(fd, SMB_SEALS);
    Process child = null;
    try (UnixSocket listener = UnixSocket.listen(name, 1); Arena arena = Arena.ofShared()) {
      MemorySegment mine = SharedMapping.map(fd, SIZE, arena);
      mine.set(JAVA_LONG, 0, MemFdChild.PARENT_FIRST);
      String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
      List<String> cmd = ChildJvm.command(List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1"), classPath,
          MemFdChild.class.getName(), name, Long.toString(SIZE), Integer.toString(SMB_SEALS));
      child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      PeerCredentials peer = converse(listener, fd, mine);
      assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child JVM did not finish");
      String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, child.exitValue(), "child JVM failed: " + out);
      assertEquals(child.pid(), peer.pid(), "SO_PEERCRED names the child");
    } finally {
      Fds.close(fd);
      if (child != null) {
        child.destroyForcibly();
      }
    }
  }

  /** The parent side of the MemFdChild conversation; returns the peer's SO_PEERCRED. */
  private static PeerCredentials converse(UnixSocket listener, int fd, MemorySegment mine) throws IOException {
    try (UnixSocket server = listener.accept(); Arena arena = Arena.ofConfined()) {
      PeerCredentials peer = server.peerCredentials();
      MemorySegment msg = arena.allocate(1);
      msg.set(JAVA_BYTE, 0, (byte) 'S');
      assertEquals(1, server.send(msg, 0, 1, fd));
      assertEquals(1, server.receive(msg, 0, 1, null));
      assertEquals('A', msg.get(JAVA_BYTE, 0));
      assertEquals(MemFdChild.CHILD_MARK, mine.get(JAVA_LONG, MemFdChild.CHILD_OFFSET), "other side's write");
      mine.set(JAVA_LONG, MemFdChild.SECOND_OFFSET, MemFdChild.PARENT_SECOND);
      msg.set(JAVA_BYTE, 0, (byte) 'B');
      assertEquals(1, server.send(msg, 0, 1, -1));
      assertEquals(1, server.receive(msg, 0, 1, null));
      assertEquals('C', msg.get(JAVA_BYTE, 0));
      return peer;
    }
  }
}
