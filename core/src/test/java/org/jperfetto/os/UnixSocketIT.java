package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Real AF_UNIX sockets: filesystem and abstract addresses, data, fd passing, errors. */
@Timeout(20)
@SuppressWarnings("try") // some resources exist only to be held open and closed
class UnixSocketIT {
  private static final AtomicLong NAMES = new AtomicLong();

  @TempDir Path dir;

  static String abstractName() {
    return "@jperfetto-test-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
  }

  /** A connected pair: [0] the client, [1] the accepted server side. The listener is closed. */
  static UnixSocket[] pair(String path) throws IOException {
    try (UnixSocket listener = UnixSocket.listen(path, 4)) {
      UnixSocket client = UnixSocket.connect(path);
      UnixSocket server = listener.accept();
      return new UnixSocket[] {client, server};
    }
  }

  static void sendAll(UnixSocket s, MemorySegment buf, int fd) throws ErrnoException {
    long sent = 0;
    while (sent < buf.byteSize()) {
      long n = s.send(buf, sent, buf.byteSize() - sent, sent == 0 ? fd : -1);
      assertTrue(n > 0, "blocking send returned " + n);
      sent += n;
    }
  }

  static byte[] receiveExactly(UnixSocket s, int len, int[] fdOut) throws ErrnoException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(len);
      long got = 0;
      int[] fd = {-1};
      while (got < len) {
        long n = s.receive(buf, got, len - got, fd);
        assertTrue(n > 0, "unexpected EOF/would-block: " + n);
        if (fd[0] >= 0 && fdOut != null) {
          fdOut[0] = fd[0];
        }
        got += n;
      }
      return buf.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }
  }

  static int[] ids(String key) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith(key + ":")) {
        String[] f = line.substring(key.length() + 1).trim().split("\\s+");
        return new int[] {Integer.parseInt(f[0])};
      }
    }
    throw new AssertionError("no " + key + " in /proc/self/status");
  }

  private void roundTrip(String path) throws IOException {
    UnixSocket[] p = pair(path);
    try (UnixSocket client = p[0]; UnixSocket server = p[1]; Arena arena = Arena.ofConfined()) {
      byte[] hello = "hello, jtraced".getBytes(StandardCharsets.UTF_8);
      sendAll(client, arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, hello), -1);
      assertArrayEquals(hello, receiveExactly(server, hello.length, null));
      // and back, from a heap segment through the bounce buffer
      byte[] reply = "reply".getBytes(StandardCharsets.UTF_8);
      sendAll(server, MemorySegment.ofArray(reply), -1);
      byte[] into = new byte[reply.length];
      long n = client.receive(MemorySegment.ofArray(into), 0, into.length, null);
      assertEquals(reply.length, n);
      assertArrayEquals(reply, into);
    }
  }

  @Test
  void sendsAndReceivesOverFilesystemPath() throws IOException {
    roundTrip(dir.resolve("s.sock").toString());
  }

  @Test
  void sendsAndReceivesOverAbstractName() throws IOException {
    roundTrip(abstractName());
  }

  @Test
  void abstractNameLeavesNoFile() throws IOException {
    String name = abstractName();
    try (UnixSocket l = UnixSocket.listen(name, 1)) {
      assertFalse(Files.exists(Path.of(name)));
      assertFalse(UnixSocket.unlinkStale(name));
    }
  }

  @Test
  void passesOneDescriptorThatNamesTheSameKernelObject() throws IOException {
    UnixSocket[] p = pair(abstractName());
    try (UnixSocket client = p[0]; UnixSocket server = p[1];
        UnixSocket other = UnixSocket.listen(abstractName(), 1); Arena arena = Arena.ofConfined()) {
      MemorySegment one = arena.allocate(1);
      one.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 42);
      assertEquals(1, client.send(one, 0, 1, other.fd()));
      int[] fd = {-7};
      MemorySegment in = arena.allocate(1);
      assertEquals(1, server.receive(in, 0, 1, fd));
      assertEquals(42, in.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
      assertTrue(fd[0] >= 0, "no descriptor received");
      assertNotEquals(other.fd(), fd[0]);
      assertEquals(Files.readSymbolicLink(Path.of("/proc/self/fd/" + other.fd())),
          Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd[0])));
      // received descriptors are close-on-exec
      String fdinfo = Files.readString(Path.of("/proc/self/fdinfo/" + fd[0]));
      int flags = Integer.parseInt(fdinfo.lines().filter(l -> l.startsWith("flags:")).findFirst()
          .orElseThrow().substring(6).trim(), 8);
      assertTrue((flags & 02000000) != 0, "O_CLOEXEC missing: flags=" + Integer.toOctalString(flags));
      Fds.close(fd[0]);
      // a message without a descriptor reports -1
      assertEquals(1, client.send(one, 0, 1, -1));
      fd[0] = -7;
      assertEquals(1, server.receive(in, 0, 1, fd));
      assertEquals(-1, fd[0]);
    }
  }

  @Test
  void receivedDescriptorIsClosedWhenCallerDoesNotWantIt() throws IOException {
    UnixSocket[] p = pair(abstractName());
    try (UnixSocket client = p[0]; UnixSocket server = p[1]; Arena arena = Arena.ofConfined()) {
      int before = Fds.openFdCount();
      MemorySegment one = arena.allocate(1);
      assertEquals(1, client.send(one, 0, 1, client.fd()));
      assertEquals(1, server.receive(one, 0, 1, null));
      assertEquals(before, Fds.openFdCount());
    }
  }

  @Test
  void peerCredentialsAreOurs() throws IOException {
    UnixSocket[] p = pair(dir.resolve("cred.sock").toString());
    try (UnixSocket client = p[0]; UnixSocket server = p[1]) {
      PeerCredentials c = server.peerCredentials();
      assertEquals(ProcessHandle.current().pid(), c.pid());
      assertEquals(ids("Uid")[0], c.uid());
      assertEquals(ids("Gid")[0], c.gid());
      assertEquals(c, client.peerCredentials());
    }
  }

  @Test
  void nonBlockingAcceptAndReceiveReportWouldBlock() throws IOException {
    String name = abstractName();
    try (UnixSocket listener = UnixSocket.listen(name, 2); Arena arena = Arena.ofConfined()) {
      listener.setNonBlocking(true);
      assertNull(listener.accept());
      try (UnixSocket client = UnixSocket.connect(name); UnixSocket server = listener.accept()) {
        assertTrue(server != null && server.fd() >= 0);
        server.setNonBlocking(true);
        MemorySegment buf = arena.allocate(16);
        int[] fd = {0};
        assertEquals(-1, server.receive(buf, 0, 16, fd));
        assertEquals(-1, fd[0]);
        // back to blocking: data then arrives normally
        server.setNonBlocking(false);
        assertEquals(3, client.send(buf, 0, 3, -1));
        assertEquals(3, server.receive(buf, 0, 16, fd));
      }
    }
  }

  @Test
  void nonBlockingSendReportsWouldBlockWhenBufferIsFull() throws IOException {
    UnixSocket[] p = pair(abstractName());
    try (UnixSocket client = p[0]; UnixSocket server = p[1]; Arena arena = Arena.ofConfined()) {
      client.setNonBlocking(true);
      MemorySegment chunk = arena.allocate(64 * 1024);
      long total = 0;
      long n;
      int rounds = 0;
      while ((n = client.send(chunk, 0, chunk.byteSize(), -1)) > 0) {
        total += n;
        assertTrue(++rounds < 100_000, "socket buffer never filled");
      }
      assertEquals(-1, n);
      assertTrue(total > 0);
    }
  }

  @Test
  void orderlyShutdownAndCloseGiveEof() throws IOException {
    UnixSocket[] p = pair(abstractName());
    try (UnixSocket client = p[0]; UnixSocket server = p[1]; Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(8);
      client.shutdown();
      assertEquals(0, server.receive(buf, 0, 8, null));
    }
    UnixSocket[] q = pair(abstractName());
    try (UnixSocket server = q[1]; Arena arena = Arena.ofConfined()) {
      q[0].close();
      assertEquals(0, server.receive(arena.allocate(8), 0, 8, null));
    }
  }

  @Test
  void sendToClosedPeerFailsWithEpipeNotSignal() throws IOException {
    UnixSocket[] p = pair(abstractName());
    try (UnixSocket client = p[0]; Arena arena = Arena.ofConfined()) {
      p[1].close();
      MemorySegment buf = arena.allocate(8);
      ErrnoException e = assertThrows(ErrnoException.class, () -> {
        for (int i = 0; i < 100; i++) {
          client.send(buf, 0, 8, -1);
        }
      });
      assertEquals("sendmsg", e.call());
      assertTrue(e.errno() == Errno.EPIPE || e.errno() == Errno.ECONNRESET, e.getMessage());
      assertTrue(e.getMessage().startsWith("sendmsg("), e.getMessage());
      assertTrue(e.getMessage().contains(e.errnoName()), e.getMessage());
      assertFalse(e.isWouldBlock());
    }
  }

  @Test
  void connectToMissingPathNamesCallAndPath() {
    String path = dir.resolve("nobody-here.sock").toString();
    ErrnoException e = assertThrows(ErrnoException.class, () -> UnixSocket.connect(path));
    assertEquals("connect", e.call());
    assertEquals(Errno.ENOENT, e.errno());
    assertEquals("connect(" + path + "): ENOENT (no such file or directory)", e.getMessage());

    String name = abstractName();
    ErrnoException a = assertThrows(ErrnoException.class, () -> UnixSocket.connect(name));
    assertEquals(Errno.ECONNREFUSED, a.errno());
    assertTrue(a.getMessage().contains(name), a.getMessage());
  }

  @Test
  void badPathsAreClearErrors() {
    String longPath = "/tmp/" + "x".repeat(120);
    ErrnoException e = assertThrows(ErrnoException.class, () -> UnixSocket.listen(longPath, 1));
    assertEquals(Errno.ENAMETOOLONG, e.errno());
    assertTrue(e.getMessage().contains("at most 107"), e.getMessage());
    assertEquals(Errno.ENOENT, assertThrows(ErrnoException.class, () -> UnixSocket.connect("")).errno());
    ErrnoException noDir = assertThrows(ErrnoException.class,
        () -> UnixSocket.listen(dir.resolve("no/such/dir.sock").toString(), 1));
    assertEquals("bind", noDir.call());
    assertEquals(Errno.ENOENT, noDir.errno());
  }

  @Test
  void staleSocketFileIsRefusedUntilUnlinkedExplicitly() throws IOException {
    String path = dir.resolve("stale.sock").toString();
    UnixSocket.listen(path, 1).close(); // leaves the socket file behind
    assertTrue(Files.exists(Path.of(path)));
    assertEquals(Errno.ECONNREFUSED, assertThrows(ErrnoException.class, () -> UnixSocket.connect(path)).errno());
    assertEquals(Errno.EADDRINUSE, assertThrows(ErrnoException.class, () -> UnixSocket.listen(path, 1)).errno());
    assertTrue(UnixSocket.unlinkStale(path));
    assertFalse(Files.exists(Path.of(path)));
    try (UnixSocket live = UnixSocket.listen(path, 1)) {
      assertFalse(UnixSocket.unlinkStale(path), "a live server's socket must stay");
      assertTrue(Files.exists(Path.of(path)));
    }
    Path regular = Files.writeString(dir.resolve("not-a-socket"), "data");
    assertThrows(IOException.class, () -> UnixSocket.unlinkStale(regular.toString()));
    assertTrue(Files.exists(regular));
  }

  @Test
  void closeIsIdempotent() throws IOException {
    UnixSocket l = UnixSocket.listen(abstractName(), 1);
    int before = Fds.openFdCount();
    l.close();
    l.close();
    assertEquals(-1, l.fd());
    assertEquals(before - 1, Fds.openFdCount());
  }

  @Test
  void dupGivesAnotherDescriptorForTheSameObject() throws IOException {
    try (UnixSocket l = UnixSocket.listen(abstractName(), 1)) {
      int d = Fds.dup(l.fd());
      try {
        assertNotEquals(l.fd(), d);
        assertEquals(Files.readSymbolicLink(Path.of("/proc/self/fd/" + l.fd())),
            Files.readSymbolicLink(Path.of("/proc/self/fd/" + d)));
      } finally {
        Fds.close(d);
      }
      ErrnoException e = assertThrows(ErrnoException.class, () -> Fds.close(d));
      assertEquals(Errno.EBADF, e.errno());
    }
  }
  @Test
  void descriptorsBeyondTheFirstAreClosedOnArrival() throws IOException {
    UnixSocket[] p = UnixSocket.pair();
    try (UnixSocket a = p[0]; UnixSocket b = p[1]; Arena arena = Arena.ofConfined()) {
      int m1 = MemFd.create("jperfetto-extra-1", 4096);
      int m2 = MemFd.create("jperfetto-extra-2", 4096);
      int m3 = MemFd.create("jperfetto-extra-3", 4096);
      try {
        MemorySegment one = arena.allocate(1);
        int before = Fds.openFdCount();
        assertEquals(1, a.sendDescriptors(one, 0, 1, m1, m2, m3));
        int[] fd = {-1};
        assertEquals(1, b.receive(one, 0, 1, fd));
        assertTrue(fd[0] >= 0);
        assertEquals(before + 1, Fds.openFdCount(), "only the first descriptor is kept");
        assertTrue(Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd[0])).toString().contains("jperfetto-extra-1"));
        Fds.close(fd[0]);
        // a full control buffer that nobody wants: every descriptor is closed
        int[] many = new int[Scratch.MAX_FDS_PER_MESSAGE];
        java.util.Arrays.fill(many, m2);
        assertEquals(1, a.sendDescriptors(one, 0, 1, many));
        assertEquals(1, b.receive(one, 0, 1, null));
        assertEquals(before, Fds.openFdCount());
      } finally {
        Fds.close(m1);
        Fds.close(m2);
        Fds.close(m3);
      }
    }
  }

  @Test
  void socketPairAndAdoptedDescriptorsTalk() throws IOException {
    UnixSocket[] p = UnixSocket.pair();
    try (UnixSocket a = p[0]; Arena arena = Arena.ofConfined()) {
      int dup = Fds.dup(p[1].fd());
      p[1].close();
      try (UnixSocket b = UnixSocket.adopt(dup, "inherited")) {
        assertEquals(dup, b.fd());
        MemorySegment buf = arena.allocate(4);
        buf.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 0xcafe);
        assertEquals(4, a.send(buf, 0, 4, -1));
        MemorySegment in = arena.allocate(4);
        assertEquals(4, b.receive(in, 0, 4, null));
        assertEquals(0xcafe, in.get(java.lang.foreign.ValueLayout.JAVA_INT, 0));
        assertEquals(ProcessHandle.current().pid(), b.peerCredentials().pid());
      }
      int memfd = MemFd.create("jperfetto-not-a-socket", 0);
      try {
        ErrnoException e = assertThrows(ErrnoException.class, () -> UnixSocket.adopt(memfd, "x"));
        assertEquals(Errno.ENOTSOCK, e.errno());
      } finally {
        Fds.close(memfd);
      }
    }
  }

  @Test
  void heapSegmentsLargerThanTheBounceBufferGoInPieces() throws Exception {
    UnixSocket[] p = UnixSocket.pair();
    try (UnixSocket a = p[0]; UnixSocket b = p[1]) {
      byte[] big = new byte[300_000];
      new java.util.Random(7).nextBytes(big);
      byte[] got = new byte[big.length];
      java.util.concurrent.CompletableFuture<Void> done = java.util.concurrent.CompletableFuture.runAsync(() -> {
        try {
          long at = 0;
          while (at < got.length) {
            long n = b.receive(MemorySegment.ofArray(got), at, got.length - at, null);
            assertTrue(n > 0 && n <= Scratch.BOUNCE_BYTES, "n=" + n);
            at += n;
          }
        } catch (ErrnoException e) {
          throw new AssertionError(e);
        }
      });
      long at = 0;
      while (at < big.length) {
        long n = a.send(MemorySegment.ofArray(big), at, big.length - at, -1);
        assertTrue(n > 0 && n <= Scratch.BOUNCE_BYTES, "n=" + n);
        at += n;
      }
      done.get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertArrayEquals(big, got);
    }
  }

  @Test
  void argumentsOutOfBoundsAreRejectedBeforeTheKernel() throws IOException {
    UnixSocket[] p = UnixSocket.pair();
    try (UnixSocket a = p[0]; UnixSocket b = p[1]; Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(8);
      assertThrows(IndexOutOfBoundsException.class, () -> a.send(buf, 4, 8, -1));
      assertThrows(IndexOutOfBoundsException.class, () -> b.receive(buf, -1, 4, null));
      assertThrows(IllegalArgumentException.class, () -> a.send(buf, 0, 0, a.fd()));
      assertThrows(IllegalArgumentException.class, () -> b.receive(buf.asReadOnly(), 0, 8, null));
      Arena closed = Arena.ofConfined();
      MemorySegment gone = closed.allocate(8);
      closed.close();
      assertThrows(IllegalStateException.class, () -> a.send(gone, 0, 8, -1));
    }
  }
}
