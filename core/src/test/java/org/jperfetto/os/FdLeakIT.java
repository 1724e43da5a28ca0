package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every descriptor and mapping the os layer hands out comes back: 10,000 cycles of connect,
 * accept, memfd create + seal, send with the fd, receive, map, close, and the count of
 * /proc/self/fd is unchanged.
 */
@Timeout(120)
class FdLeakIT {
  private static final int CYCLES = 10_000;

  @Test
  void tenThousandOpenSendCloseCyclesLeakNothing() throws IOException {
    String name = UnixSocketIT.abstractName();
    String memfdName = "jperfetto-leak-" + ProcessHandle.current().pid();
    try (UnixSocket listener = UnixSocket.listen(name, 8); Arena scratch = Arena.ofConfined()) {
      MemorySegment msg = scratch.allocate(8);
      int[] received = {-1};
      cycle(name, memfdName, listener, msg, received, 0); // warm up class init, thread locals, loggers
      int before = Fds.openFdCount();
      for (int i = 1; i <= CYCLES; i++) {
        cycle(name, memfdName, listener, msg, received, i);
      }
      assertEquals(before, Fds.openFdCount(), "descriptors leaked over " + CYCLES + " cycles");
      assertEquals(0, MemFdIT.mappingsNamed(memfdName), "mappings leaked");
    }
  }

  private static void cycle(String name, String memfdName, UnixSocket listener, MemorySegment msg,
      int[] received, int i) throws IOException {
    int fd = MemFd.create(memfdName, 4096);
    try (UnixSocket client = UnixSocket.connect(name); UnixSocket server = listener.accept()) {
      MemFd.addSeals(fd, MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL);
      msg.set(JAVA_LONG, 0, i);
      assertEquals(8, client.send(msg, 0, 8, fd));
      Fds.close(fd);
      fd = -1;
      assertEquals(8, server.receive(msg, 0, 8, received));
      assertTrue(received[0] >= 0, "no fd in cycle " + i);
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment m = SharedMapping.map(received[0], 4096, arena);
        m.set(JAVA_LONG, 0, i);
      } finally {
        Fds.close(received[0]);
      }
    } finally {
      Fds.closeQuietly(fd);
    }
  }
}
