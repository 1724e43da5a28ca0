package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** java.nio binds, a client queues in the backlog, then the socket becomes a UnixSocket of ours. */
@Timeout(20)
class BoundListenerIT {
  @TempDir Path dir;

  /** The O_CLOEXEC bit from /proc/self/fdinfo (flags are octal there). */
  static boolean closeOnExec(int fd) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd))) {
      if (line.startsWith("flags:")) {
        return (Long.parseLong(line.substring(6).trim(), 8) & 02000000) != 0;
      }
    }
    throw new AssertionError("no flags in fdinfo of " + fd);
  }

  static byte[] echoOnce(UnixSocket client, UnixSocket server, String text) throws ErrnoException {
    try (Arena arena = Arena.ofConfined()) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      MemorySegment buf = arena.allocate(64);
      buf.copyFrom(MemorySegment.ofArray(bytes));
      assertEquals(bytes.length, client.send(buf, 0, bytes.length, -1));
      MemorySegment in = arena.allocate(64);
      long n = server.receive(in, 0, 64, null);
      return in.asSlice(0, n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }
  }

  @Test
  void clientConnectedBeforeTheTakeOverIsAcceptedAfterIt() throws Exception {
    String path = dir.resolve("early.sock").toString();
    // java.nio keeps a socket of its own once its first UNIX channel opens: open one before counting
    // (run alone, this test would otherwise count that descriptor as the one not closed).
    java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX).close();
    int fdsBefore = Fds.openFdCount();
    try (BoundListener bound = BoundListener.listen(path, 8)) {
      assertTrue(Files.exists(Path.of(path)), "the socket file exists once listen returns");
      try (UnixSocket early = UnixSocket.connect(path); // queued: nobody accepts yet
          UnixSocket listener = bound.toUnixSocket()) {
        assertEquals(path, listener.address());
        assertTrue(closeOnExec(listener.fd()), "the taken-over descriptor is close-on-exec");
        assertThrows(IllegalStateException.class, bound::toUnixSocket);
        try (UnixSocket served = listener.accept()) {
          assertNotNull(served);
          assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), echoOnce(early, served, "hello"));
        }
        try (UnixSocket late = UnixSocket.connect(path); UnixSocket served = listener.accept()) {
          assertArrayEquals("again".getBytes(StandardCharsets.UTF_8), echoOnce(late, served, "again"));
        }
      }
    }
    assertEquals(fdsBefore, Fds.openFdCount(), "java.nio's descriptor was closed after the dup");
  }

  @Test
  void closedWithoutTakeOverStopsListening() throws Exception {
    String path = dir.resolve("closed.sock").toString();
    BoundListener.listen(path, 1).close();
    ErrnoException e = assertThrows(ErrnoException.class, () -> UnixSocket.connect(path));
    assertEquals(Errno.ECONNREFUSED, e.errno());
    assertTrue(UnixSocket.unlinkStale(path), "nothing listens: the file is stale");
  }

  @Test
  void secondBindReportsTheKernelsErrno() throws Exception {
    String path = dir.resolve("busy.sock").toString();
    try (BoundListener _ = BoundListener.listen(path, 1)) {
      ErrnoException e = assertThrows(ErrnoException.class, () -> BoundListener.listen(path, 1));
      assertEquals(Errno.EADDRINUSE, e.errno());
      assertTrue(!UnixSocket.unlinkStale(path), "a live listener is not stale");
    }
  }

  @Test
  void abstractNamesGoThroughLibc() throws Exception {
    String name = "@jperfetto-bound-" + ProcessHandle.current().pid();
    try (BoundListener bound = BoundListener.listen(name, 4);
        UnixSocket listener = bound.toUnixSocket();
        UnixSocket client = UnixSocket.connect(name);
        UnixSocket served = listener.accept()) {
      assertArrayEquals("abs".getBytes(StandardCharsets.UTF_8), echoOnce(client, served, "abs"));
    }
  }

  @Test
  void descriptorLookupFailsClearlyForAPathNobodyHere() throws Exception {
    String path = dir.resolve("nobody.sock").toString();
    IOException e = assertThrows(IOException.class, () -> BoundListener.descriptorOf(path));
    assertTrue(e.getMessage().contains(path), e.getMessage());
    try (UnixSocket viaLibc = UnixSocket.listen(path, 1)) {
      assertEquals(viaLibc.fd(), BoundListener.descriptorOf(path), "found by inode, whoever bound it");
    }
  }

  @Test
  void pathWithSpacesIsFound() throws Exception {
    String path = dir.resolve("with  two spaces.sock").toString();
    try (BoundListener bound = BoundListener.listen(path, 1); UnixSocket listener = bound.toUnixSocket();
        UnixSocket client = UnixSocket.connect(path); UnixSocket served = listener.accept()) {
      assertArrayEquals("sp".getBytes(StandardCharsets.UTF_8), echoOnce(client, served, "sp"));
    }
  }
}
