package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** epoll over real sockets and the eventfd wakeup. */
@Timeout(20)
@SuppressWarnings("try") // some resources exist only to be held open and closed
class EpollIT {

  @Test
  void listeningSocketBecomesReadableWhenAClientConnects() throws IOException {
    String name = UnixSocketIT.abstractName();
    try (Epoll ep = Epoll.create(); UnixSocket listener = UnixSocket.listen(name, 4)) {
      listener.setNonBlocking(true);
      ep.add(listener.fd(), Epoll.IN, 7L);
      assertEquals(0, ep.await(0));
      try (UnixSocket client = UnixSocket.connect(name)) {
        assertEquals(1, ep.await(5000));
        assertEquals(7L, ep.token(0));
        assertTrue((ep.events(0) & Epoll.IN) != 0);
        try (UnixSocket accepted = listener.accept()) {
          assertTrue(accepted.fd() >= 0);
        }
        assertEquals(0, ep.await(0), "level-triggered: nothing pending any more");
      }
    }
  }

  @Test
  void dataSocketReadinessModifyRemoveAndHangup() throws IOException {
    UnixSocket[] p = UnixSocketIT.pair(UnixSocketIT.abstractName());
    try (UnixSocket client = p[0]; UnixSocket server = p[1]; Epoll ep = Epoll.create();
        Arena arena = Arena.ofConfined()) {
      ep.add(server.fd(), Epoll.IN | Epoll.RDHUP, 0x1234_5678_9abcL);
      assertEquals(0, ep.await(0));
      MemorySegment buf = arena.allocate(64);
      assertEquals(64, client.send(buf, 0, 64, -1));
      assertEquals(1, ep.await(5000));
      assertEquals(0x1234_5678_9abcL, ep.token(0), "64-bit token survives the packed epoll_event");
      assertEquals(Epoll.IN, ep.events(0));

      ep.modify(server.fd(), Epoll.OUT, -5L);
      assertEquals(1, ep.await(5000));
      assertEquals(-5L, ep.token(0));
      assertEquals(Epoll.OUT, ep.events(0));

      ep.remove(server.fd());
      assertEquals(0, ep.await(0));
      ErrnoException e = assertThrows(ErrnoException.class, () -> ep.remove(server.fd()));
      assertEquals("epoll_ctl", e.call());
      assertEquals(Errno.ENOENT, e.errno());

      ep.add(server.fd(), Epoll.IN | Epoll.RDHUP, 3L);
      assertEquals(64, server.receive(buf, 0, 64, null));
      assertEquals(0, ep.await(0));
      client.close();
      assertEquals(1, ep.await(5000));
      assertTrue((ep.events(0) & Epoll.RDHUP) != 0, "events=" + ep.events(0));
      assertTrue((ep.events(0) & Epoll.IN) != 0);
    }
  }

  @Test
  void manyReadyDescriptorsAreAllReported() throws IOException {
    UnixSocket[][] pairs = new UnixSocket[5][];
    try (Epoll ep = Epoll.create(3); Arena arena = Arena.ofConfined()) {
      MemorySegment one = arena.allocate(1);
      for (int i = 0; i < pairs.length; i++) {
        pairs[i] = UnixSocketIT.pair(UnixSocketIT.abstractName());
        ep.add(pairs[i][1].fd(), Epoll.IN, 100 + i);
        pairs[i][0].send(one, 0, 1, -1);
      }
      assertEquals(3, ep.await(5000), "capped at maxEvents");
      long seen = 0;
      for (int round = 0; round < 3 && Long.bitCount(seen) < 5; round++) {
        int n = ep.await(0);
        for (int i = 0; i < n; i++) {
          seen |= 1L << (ep.token(i) - 100);
        }
      }
      assertEquals(0b11111L, seen);
    } finally {
      for (UnixSocket[] p : pairs) {
        if (p != null) {
          p[0].close();
          p[1].close();
        }
      }
    }
  }

  @Test
  void wakeupFromAnotherThreadEndsABlockedAwait() throws Exception {
    try (Epoll ep = Epoll.create()) {
      CountDownLatch waiting = new CountDownLatch(1);
      Thread waker = Thread.ofPlatform().start(() -> {
        try {
          waiting.await(5, TimeUnit.SECONDS);
          Thread.sleep(50);
          ep.wakeup();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      });
      waiting.countDown();
      long start = System.nanoTime();
      assertEquals(0, ep.await(-1));
      assertTrue(ep.wokenUp());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
      waker.join();
      // the eventfd was drained: the next poll is quiet
      assertEquals(0, ep.await(0));
      assertFalse(ep.wokenUp());
      // wakeups before the await are not lost, and several collapse into one
      ep.wakeup();
      ep.wakeup();
      assertEquals(0, ep.await(1000));
      assertTrue(ep.wokenUp());
      assertEquals(0, ep.await(0));
      assertFalse(ep.wokenUp());
    }
  }

  @Test
  void reservedTokenAndBadArgumentsAreRejected() throws IOException {
    try (Epoll ep = Epoll.create()) {
      assertThrows(IllegalArgumentException.class, () -> ep.add(0, Epoll.IN, Epoll.WAKEUP_TOKEN));
      ErrnoException e = assertThrows(ErrnoException.class, () -> ep.add(-1, Epoll.IN, 1));
      assertEquals(Errno.EBADF, e.errno());
    }
    assertThrows(IllegalArgumentException.class, () -> Epoll.create(0));
  }

  @Test
  void closeReleasesBothDescriptors() throws IOException {
    int before = Fds.openFdCount();
    Epoll ep = Epoll.create();
    assertEquals(before + 2, Fds.openFdCount());
    ep.close();
    ep.close();
    ep.wakeup(); // after close: a no-op, not an error
    assertEquals(before, Fds.openFdCount());
  }
}
