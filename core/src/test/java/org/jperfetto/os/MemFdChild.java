package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The other process of {@link MemFdIT}: connects to the abstract socket in args[0], receives a
 * sealed memfd, maps it and talks through it. Exit code 0 means every check passed; other codes
 * say which one failed (also printed on stderr).
 */
public final class MemFdChild {
  static final long PARENT_FIRST = 0x5041_5245_4e54_0001L;
  static final long CHILD_MARK = 0x4348_494c_4400_0002L;
  static final long PARENT_SECOND = 0x5041_5245_4e54_0003L;
  static final long CHILD_OFFSET = 4096;
  static final long SECOND_OFFSET = 8192;

  private MemFdChild() {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args[0], Long.parseLong(args[1]), Integer.parseInt(args[2])));
  }

  private static int fail(int code, String what) {
    System.err.println("MemFdChild: " + what);
    return code;
  }

  static int run(String socketName, long size, int expectedSeals) throws Exception {
    try (UnixSocket sock = UnixSocket.connect(socketName); Arena arena = Arena.ofShared()) {
      MemorySegment msg = arena.allocate(1);
      int[] fd = {-1};
      if (sock.receive(msg, 0, 1, fd) != 1 || fd[0] < 0) {
        return fail(2, "no memfd received");
      }
      if (MemFd.seals(fd[0]) != expectedSeals) {
        return fail(3, "seals " + MemFd.seals(fd[0]) + " != " + expectedSeals);
      }
      if (MemFd.size(fd[0]) != size) {
        return fail(4, "size " + MemFd.size(fd[0]));
      }
      MemorySegment smb = SharedMapping.map(fd[0], size, arena);
      Fds.close(fd[0]); // the mapping keeps the memory
      if (smb.get(JAVA_LONG, 0) != PARENT_FIRST) {
        return fail(5, "parent's write not visible: " + Long.toHexString(smb.get(JAVA_LONG, 0)));
      }
      try {
        MemFd.resize(fd[0], size * 2);
        return fail(6, "resize of a closed fd succeeded");
      } catch (ErrnoException expected) {
        // fd is closed: EBADF, nothing to grow
      }
      smb.set(JAVA_LONG, CHILD_OFFSET, CHILD_MARK);
      msg.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 'A');
      sock.send(msg, 0, 1, -1);
      if (sock.receive(msg, 0, 1, null) != 1 || msg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0) != 'B') {
        return fail(7, "no second message");
      }
      if (smb.get(JAVA_LONG, SECOND_OFFSET) != PARENT_SECOND) {
        return fail(8, "parent's second write not visible");
      }
      msg.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 'C');
      sock.send(msg, 0, 1, -1);
      return 0;
    }
  }
}
