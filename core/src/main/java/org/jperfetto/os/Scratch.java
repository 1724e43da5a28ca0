package org.jperfetto.os;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Native scratch memory owned by one thread: the errno capture state and the small structs the
 * socket calls fill in (msghdr, iovec, cmsg, ucred, stat). Allocated once per thread, so the hot
 * paths (sendmsg, recvmsg, epoll_wait) allocate nothing. Never share an instance between threads.
 */
final class Scratch {
  /** Room for this many SCM_RIGHTS fds in one recvmsg; more than one is closed on arrival anyway. */
  static final int MAX_FDS_PER_MESSAGE = 8;
  /** CMSG_SPACE(MAX_FDS_PER_MESSAGE * sizeof(int)). */
  static final long CONTROL_BYTES = Libc.CMSG_HEADER_BYTES + align8(4L * MAX_FDS_PER_MESSAGE);
  /** Bounce buffer for heap segments, which cannot be handed to a blocking downcall. */
  static final int BOUNCE_BYTES = 128 * 1024;

  private static final ThreadLocal<Scratch> PER_THREAD = ThreadLocal.withInitial(Scratch::new);
  private static final long ERRNO_OFFSET =
      Linker.Option.captureStateLayout().byteOffset(MemoryLayout.PathElement.groupElement("errno"));

  private final Arena arena = Arena.ofAuto();
  final MemorySegment errnoState = arena.allocate(Linker.Option.captureStateLayout());
  final MemorySegment msghdr = arena.allocate(Libc.MSGHDR_BYTES, 16);
  final MemorySegment iovec = arena.allocate(Libc.IOVEC_BYTES, 16);
  final MemorySegment control = arena.allocate(CONTROL_BYTES, 16);
  /** ucred, an eventfd counter, a socklen_t: small out-parameters. */
  final MemorySegment word = arena.allocate(16, 16);
  final MemorySegment length = arena.allocate(8, 8);
  final MemorySegment stat = arena.allocate(Libc.STAT_BYTES, 16);
  private MemorySegment bounce;

  static Scratch get() {
    return PER_THREAD.get();
  }

  int errno() {
    return errnoState.get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
  }

  MemorySegment bounce() {
    if (bounce == null) {
      bounce = arena.allocate(BOUNCE_BYTES, 16);
    }
    return bounce;
  }

  static long align8(long n) {
    return (n + 7) & ~7L;
  }
}
