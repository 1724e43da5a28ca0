package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@link Libc#syscall} through the stub every libc function shares: arguments, result and errno. */
class LibcSyscallTest {
  /** getpid and gettid: 39 and 186 on x86_64, 172 and 178 on aarch64 (asm-generic). */
  private static final long SYS_GETPID = Libc.X86_64 ? 39 : 172;
  private static final long SYS_GETTID = Libc.X86_64 ? 186 : 178;
  /** No kernel has a call by this number. */
  private static final long NO_SUCH_CALL = 100_000;
  /** ENOSYS, the same on both ABIs. */
  private static final int ENOSYS = 38;

  @Test
  void aCallWithoutArgumentsReturnsTheKernelsAnswer() throws IOException {
    assertEquals(ProcessHandle.current().pid(), Libc.syscall(Scratch.get(), SYS_GETPID, 0, 0, 0));
    // /proc/thread-self links to PID/task/TID of the thread that reads it.
    Path self = Files.readSymbolicLink(Path.of("/proc/thread-self"));
    long tid = Long.parseLong(self.getFileName().toString());
    assertEquals(tid, Libc.syscall(Scratch.get(), SYS_GETTID, 0, 0, 0));
  }

  @Test
  void argumentsReachTheKernel() {
    // membarrier(MEMBARRIER_CMD_QUERY, flags, 0): flags must be 0, so a non-zero one is refused.
    Scratch s = Scratch.get();
    long supported = Libc.syscall(s, Membarrier.SYS_MEMBARRIER, Membarrier.CMD_QUERY, 0, 0);
    long badFlags = Libc.syscall(s, Membarrier.SYS_MEMBARRIER, Membarrier.CMD_QUERY, 1, 0);
    if (supported >= 0) {
      assertEquals(-1, badFlags, "flags=1 refused");
      assertEquals(Errno.EINVAL, s.errno());
    } else {
      assertEquals(-1, supported); // a kernel or filter without membarrier refuses both
    }
  }

  @Test
  void anUnknownCallFailsWithEnosysInErrno() {
    Scratch s = Scratch.get();
    assertEquals(-1, Libc.syscall(s, NO_SUCH_CALL, 0, 0, 0));
    assertEquals(ENOSYS, s.errno());
  }
}
