package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * The project's only FFM downcalls into libc. One handle per function, resolved once; errno comes
 * from {@code captureCallState("errno")} into the calling thread's {@link Scratch}; EINTR is
 * retried (except by close, which must not be). Failures become {@link ErrnoException}s naming the
 * call. Calls that can block are never linked as critical.
 *
 * <p>Struct layouts and constants are those of Linux on x86_64 and aarch64 (LP64, little-endian);
 * anything else is refused when this class initialises.
 */
@SuppressWarnings("restricted") // this class is where the downcalls live
final class Libc {
  // --- platform -------------------------------------------------------------------------------
  static final boolean X86_64;

  static {
    String os = System.getProperty("os.name", "");
    String arch = System.getProperty("os.arch", "");
    boolean x86 = arch.equals("amd64") || arch.equals("x86_64");
    boolean arm = arch.equals("aarch64");
    if (!os.toLowerCase(Locale.ROOT).startsWith("linux") || !(x86 || arm)
        || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN || ADDRESS.byteSize() != 8) {
      throw new UnsupportedOperationException("org.jperfetto.os supports only little-endian 64-bit "
          + "Linux on x86_64 or aarch64; this is os=" + os + " arch=" + arch + " order="
          + ByteOrder.nativeOrder());
    }
    X86_64 = x86;
  }

  // --- constants (identical on x86_64 and aarch64) --------------------------------------------
  static final int AF_UNIX = 1;
  static final int AF_INET = 2;
  static final int AF_INET6 = 10;
  static final int IPPROTO_TCP = 6;
  static final int TCP_NODELAY = 1;
  static final int SO_REUSEADDR = 2;
  static final int SOCK_STREAM = 1;
  static final int SOCK_NONBLOCK = 0x800;
  static final int SOCK_CLOEXEC = 0x80000;
  static final int SOL_SOCKET = 1;
  static final int SO_PEERCRED = 17;
  static final int SO_DOMAIN = 39;
  static final int SCM_RIGHTS = 1;
  static final int MSG_CTRUNC = 0x8;
  static final int MSG_NOSIGNAL = 0x4000;
  static final int MSG_CMSG_CLOEXEC = 0x40000000;
  static final int SHUT_RDWR = 2;
  static final int F_DUPFD_CLOEXEC = 1030;
  static final int F_GETFL = 3;
  static final int F_SETFL = 4;
  static final int F_ADD_SEALS = 1033;
  static final int F_GET_SEALS = 1034;
  static final int O_NONBLOCK = 0x800;
  static final int MFD_CLOEXEC = 1;
  static final int MFD_ALLOW_SEALING = 2;
  static final int PROT_READ = 1;
  static final int PROT_WRITE = 2;
  static final int MAP_SHARED = 1;
  static final int MAP_PRIVATE = 2;
  static final int MAP_ANONYMOUS = 0x20;
  static final int MAP_NORESERVE = 0x4000;
  static final int EPOLL_CLOEXEC = 0x80000;
  static final int EPOLL_CTL_ADD = 1;
  static final int EPOLL_CTL_DEL = 2;
  static final int EPOLL_CTL_MOD = 3;
  static final int EFD_CLOEXEC = 0x80000;
  static final int EFD_NONBLOCK = 0x800;

  // --- struct layouts (LP64) ------------------------------------------------------------------
  /** struct msghdr: name@0 namelen@8 iov@16 iovlen@24 control@32 controllen@40 flags@48. */
  static final long MSGHDR_BYTES = 56;
  static final long MSG_NAME = 0;
  static final long MSG_NAMELEN = 8;
  static final long MSG_IOV = 16;
  static final long MSG_IOVLEN = 24;
  static final long MSG_CONTROL = 32;
  static final long MSG_CONTROLLEN = 40;
  static final long MSG_FLAGS = 48;
  /** struct iovec: base@0 len@8. */
  static final long IOVEC_BYTES = 16;
  /** struct cmsghdr: len(size_t)@0 level@8 type@12, data from 16. */
  static final long CMSG_HEADER_BYTES = 16;
  static final long CMSG_LEVEL = 8;
  static final long CMSG_TYPE = 12;
  /** struct sockaddr_un: family(u16)@0, path[108]@2. */
  static final int SUN_PATH_BYTES = 108;
  static final long SOCKADDR_UN_BYTES = 2 + SUN_PATH_BYTES;
  /** struct ucred: pid@0 uid@4 gid@8. */
  static final long UCRED_BYTES = 12;
  /** struct stat: 144 bytes on x86_64, 128 on aarch64; st_size is at 48 on both. */
  static final long STAT_BYTES = 144;
  static final long STAT_SIZE = 48;
  /** struct epoll_event: events(u32)@0, data(u64)@4 packed on x86_64, @8 on aarch64. */
  static final long EPOLL_EVENT_BYTES;
  static final long EPOLL_DATA;

  static {
    EPOLL_EVENT_BYTES = X86_64 ? 12 : 16;
    EPOLL_DATA = X86_64 ? 4 : 8;
  }

  // --- handles ----------------------------------------------------------------------------------
  private static final Linker LINKER = Linker.nativeLinker();
  private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
  private static final FunctionDescriptor ANY_CALL = FunctionDescriptor.of(JAVA_LONG,
      JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);

  // One holder class per function: a handle is linked on the first call of that function, not when
  // Libc initialises, so a process pays only for the calls it makes (all share one stub, see h).
  // The JIT folds H like any static final.
  private static final class Socket {
    static final MethodHandle H = h("socket");
  }

  private static final class Socketpair {
    static final MethodHandle H = h("socketpair");
  }

  private static final class Bind {
    static final MethodHandle H = h("bind");
  }

  private static final class Listen {
    static final MethodHandle H = h("listen");
  }

  private static final class Accept4 {
    static final MethodHandle H = h("accept4");
  }

  private static final class Connect {
    static final MethodHandle H = h("connect");
  }

  private static final class Sendmsg {
    static final MethodHandle H = h("sendmsg");
  }

  private static final class Recvmsg {
    static final MethodHandle H = h("recvmsg");
  }

  private static final class Getsockopt {
    static final MethodHandle H = h("getsockopt");
  }

  private static final class Setsockopt {
    static final MethodHandle H = h("setsockopt");
  }

  private static final class Getpeername {
    static final MethodHandle H = h("getpeername");
  }

  private static final class Getsockname {
    static final MethodHandle H = h("getsockname");
  }

  private static final class Shutdown {
    static final MethodHandle H = h("shutdown");
  }

  private static final class Close {
    static final MethodHandle H = h("close");
  }

  private static final class Fcntl {
    static final MethodHandle H = h("fcntl");
  }

  private static final class EpollCreate1 {
    static final MethodHandle H = h("epoll_create1");
  }

  private static final class EpollCtl {
    static final MethodHandle H = h("epoll_ctl");
  }

  private static final class EpollWait {
    static final MethodHandle H = h("epoll_wait");
  }

  private static final class Eventfd {
    static final MethodHandle H = h("eventfd");
  }

  private static final class Read {
    static final MethodHandle H = h("read");
  }

  private static final class Write {
    static final MethodHandle H = h("write");
  }

  private static final class MemfdCreate {
    static final MethodHandle H = h("memfd_create");
  }

  private static final class Ftruncate {
    static final MethodHandle H = h("ftruncate");
  }

  private static final class Fstat {
    static final MethodHandle H = h("fstat");
  }

  private static final class Mmap {
    static final MethodHandle H = h("mmap");
  }

  private static final class Munmap {
    static final MethodHandle H = h("munmap");
  }

  private static final class Madvise {
    static final MethodHandle H = h("madvise");
  }

  private static final class Syscall {
    static final MethodHandle H = h("syscall");
  }

  private Libc() {}

  /** Links every handle now (each holder initialises once, whichever thread gets there first). */
  static void linkAll() {
    MethodHandle[] all = {
      Socket.H, Socketpair.H, Bind.H, Listen.H, Accept4.H, Connect.H, Sendmsg.H, Recvmsg.H,
      Getsockopt.H, Setsockopt.H, Getpeername.H, Getsockname.H, Shutdown.H, Close.H, Fcntl.H,
      EpollCreate1.H, EpollCtl.H, EpollWait.H,
      Eventfd.H, Read.H, Write.H, MemfdCreate.H, Ftruncate.H, Fstat.H, Mmap.H, Munmap.H, Madvise.H, Syscall.H
    };
    for (MethodHandle h : all) {
      java.util.Objects.requireNonNull(h);
    }
  }

  private static MemorySegment find(String name) {
    return LINKER.defaultLookup().find(name)
        .orElseThrow(() -> new UnsupportedOperationException("libc has no symbol " + name));
  }

  /**
   * Links libc's name with the one descriptor every function here shares: six integer-class
   * arguments and an integer-class result, each a long. On the LP64 ABIs this class accepts (SysV
   * x86_64, AAPCS64) an int, a pointer, a size_t and a long all travel in one 64-bit register each,
   * a callee reads only the low 32 bits of an int argument, arguments it does not take are ignored
   * (all six are register arguments), and an int result is the low 32 bits of the result register,
   * which callers take with an (int) cast. fcntl's variadic third argument is a register argument
   * like the others on both ABIs, and the x86_64 linker always states that no vector registers are
   * used; so are syscall(2)'s number and arguments, which it moves to the kernel's registers as
   * they are. Why one descriptor: the linker caches its downcall stubs by descriptor, so every
   * function after the first costs no new generated classes, where a descriptor of its own costs
   * about twenty (a producer links some fifteen functions while it connects: some 300 classes
   * generated at start, enough to make the JDK's class file generator hot enough for C2 during the
   * app's first second).
   */
  private static MethodHandle h(String name) {
    try {
      return LINKER.downcallHandle(find(name), ANY_CALL, ERRNO);
    } catch (IllegalCallerException e) {
      throw NativeAccessRefused.explain(e);
    }
  }

  /**
   * The address of a native segment, for a pointer argument (a heap segment has none the callee
   * could use). A raw address does not keep the memory alive the way a segment argument would:
   * everything passed here comes from an arena closed explicitly after the call, or from the
   * calling thread's Scratch, whose arena the call holds anyway through its errno segment.
   */
  private static long pointer(MemorySegment m) {
    if (!m.isNative()) {
      throw new IllegalArgumentException("a heap segment cannot be passed to libc: " + m);
    }
    return m.address();
  }

  /** Rethrows what a downcall handle itself threw (never a libc failure: those come back as -1). */
  static RuntimeException unexpected(String call, Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException("downcall " + call + " failed", t);
  }

  private static ErrnoException fail(String call, Scratch s, String subject) {
    return new ErrnoException(call, s.errno(), subject);
  }

  private static String fdName(int fd) {
    return "fd " + fd;
  }

  // --- sockets ----------------------------------------------------------------------------------

  static int socket(Scratch s, int type) throws ErrnoException {
    return socket(s, AF_UNIX, type);
  }

  /** socket(domain, type, 0). */
  static int socket(Scratch s, int domain, int type) throws ErrnoException {
    int r;
    try {
      do {
        r = (int) (long) Socket.H.invokeExact(s.errnoState, (long) domain, (long) type, 0L, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("socket", t);
    }
    if (r < 0) {
      throw fail("socket", s, null);
    }
    return r;
  }

  /** socketpair(AF_UNIX, type, 0) writing the two descriptors to {@code pair}. */
  static void socketpair(Scratch s, int type, MemorySegment pair) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Socketpair.H.invokeExact(s.errnoState,
          (long) AF_UNIX, (long) type, 0L, pointer(pair), 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("socketpair", t);
    }
    if (r < 0) {
      throw fail("socketpair", s, null);
    }
  }

  static void bind(Scratch s, int fd, MemorySegment addr, int addrLen, String path) throws ErrnoException {
    int r;
    try {
      do {
        r = (int) (long) Bind.H.invokeExact(s.errnoState,
            (long) fd, pointer(addr), (long) addrLen, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("bind", t);
    }
    if (r < 0) {
      throw fail("bind", s, path);
    }
  }

  static void listen(Scratch s, int fd, int backlog, String path) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Listen.H.invokeExact(s.errnoState, (long) fd, (long) backlog, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("listen", t);
    }
    if (r < 0) {
      throw fail("listen", s, path);
    }
  }

  /** accept4 with SOCK_CLOEXEC; -1 when a non-blocking listener has nothing pending. */
  static int accept4(Scratch s, int fd) throws ErrnoException {
    int r;
    try {
      do {
        r = (int) (long) Accept4.H.invokeExact(s.errnoState, (long) fd, 0L, 0L, (long) SOCK_CLOEXEC, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("accept4", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EAGAIN) {
        return -1;
      }
      throw fail("accept4", s, fdName(fd));
    }
    return r;
  }

  static void connect(Scratch s, int fd, MemorySegment addr, int addrLen, String path) throws ErrnoException {
    int r;
    boolean interrupted = false;
    try {
      while (true) {
        r = (int) (long) Connect.H.invokeExact(s.errnoState,
            (long) fd, pointer(addr), (long) addrLen, 0L, 0L, 0L);
        if (r == 0 || s.errno() != Errno.EINTR) {
          break;
        }
        interrupted = true; // the kernel goes on connecting; the retry reports EISCONN when done
      }
    } catch (Throwable t) {
      throw unexpected("connect", t);
    }
    if (r < 0 && !(interrupted && s.errno() == Errno.EISCONN)) {
      throw fail("connect", s, path);
    }
  }

  /** sendmsg of the msghdr in {@code s}; -1 when it would block. */
  static long sendmsg(Scratch s, int fd, int flags) throws ErrnoException {
    long r;
    try {
      do {
        r = (long) Sendmsg.H.invokeExact(s.errnoState,
            (long) fd, pointer(s.msghdr), (long) flags, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("sendmsg", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EAGAIN) {
        return -1;
      }
      throw fail("sendmsg", s, fdName(fd));
    }
    return r;
  }

  /** recvmsg into the msghdr in {@code s}; -1 when it would block. */
  static long recvmsg(Scratch s, int fd, int flags) throws ErrnoException {
    long r;
    try {
      do {
        r = (long) Recvmsg.H.invokeExact(s.errnoState,
            (long) fd, pointer(s.msghdr), (long) flags, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("recvmsg", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EAGAIN) {
        return -1;
      }
      throw fail("recvmsg", s, fdName(fd));
    }
    return r;
  }

  /** getsockopt into {@code value}; returns the length the kernel wrote. */
  static int getsockopt(Scratch s, int fd, int level, int option, MemorySegment value) throws ErrnoException {
    s.length.set(JAVA_INT, 0, (int) value.byteSize());
    int r;
    try {
      r = (int) (long) Getsockopt.H.invokeExact(s.errnoState,
          (long) fd, (long) level, (long) option, pointer(value), pointer(s.length), 0L);
    } catch (Throwable t) {
      throw unexpected("getsockopt", t);
    }
    if (r < 0) {
      throw fail("getsockopt", s, fdName(fd));
    }
    return s.length.get(JAVA_INT, 0);
  }

  /** setsockopt of an int option. */
  static void setsockopt(Scratch s, int fd, int level, int option, int value) throws ErrnoException {
    s.word.set(JAVA_INT, 0, value);
    int r;
    try {
      r = (int) (long) Setsockopt.H.invokeExact(s.errnoState,
          (long) fd, (long) level, (long) option, pointer(s.word), 4L, 0L);
    } catch (Throwable t) {
      throw unexpected("setsockopt", t);
    }
    if (r < 0) {
      throw fail("setsockopt", s, fdName(fd));
    }
  }

  /** getpeername into {@code addr}; returns the address length the kernel wrote. */
  static int getpeername(Scratch s, int fd, MemorySegment addr) throws ErrnoException {
    s.length.set(JAVA_INT, 0, (int) addr.byteSize());
    int r;
    try {
      r = (int) (long) Getpeername.H.invokeExact(s.errnoState,
          (long) fd, pointer(addr), pointer(s.length), 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("getpeername", t);
    }
    if (r < 0) {
      throw fail("getpeername", s, fdName(fd));
    }
    return s.length.get(JAVA_INT, 0);
  }

  /** getsockname into {@code addr}; returns the address length the kernel wrote. */
  static int getsockname(Scratch s, int fd, MemorySegment addr) throws ErrnoException {
    s.length.set(JAVA_INT, 0, (int) addr.byteSize());
    int r;
    try {
      r = (int) (long) Getsockname.H.invokeExact(s.errnoState,
          (long) fd, pointer(addr), pointer(s.length), 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("getsockname", t);
    }
    if (r < 0) {
      throw fail("getsockname", s, fdName(fd));
    }
    return s.length.get(JAVA_INT, 0);
  }

  static void shutdown(Scratch s, int fd, int how) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Shutdown.H.invokeExact(s.errnoState, (long) fd, (long) how, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("shutdown", t);
    }
    if (r < 0) {
      throw fail("shutdown", s, fdName(fd));
    }
  }

  /**
   * close(2). Not retried on EINTR: Linux releases the descriptor before it can report EINTR, and a
   * retry could close a descriptor another thread has just been given.
   */
  static void close(Scratch s, int fd) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Close.H.invokeExact(s.errnoState, (long) fd, 0L, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("close", t);
    }
    if (r < 0 && s.errno() != Errno.EINTR) {
      throw fail("close", s, fdName(fd));
    }
  }

  static int fcntl(Scratch s, int fd, int cmd, int arg) throws ErrnoException {
    int r;
    try {
      do {
        r = (int) (long) Fcntl.H.invokeExact(s.errnoState, (long) fd, (long) cmd, (long) arg, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("fcntl", t);
    }
    if (r < 0) {
      throw fail("fcntl", s, fdName(fd));
    }
    return r;
  }

  // --- epoll and eventfd ----------------------------------------------------------------------

  static int epollCreate(Scratch s) throws ErrnoException {
    int r;
    try {
      r = (int) (long) EpollCreate1.H.invokeExact(s.errnoState, (long) EPOLL_CLOEXEC, 0L, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("epoll_create1", t);
    }
    if (r < 0) {
      throw fail("epoll_create1", s, null);
    }
    return r;
  }

  static void epollCtl(Scratch s, int epfd, int op, int fd, MemorySegment event) throws ErrnoException {
    int r;
    try {
      r = (int) (long) EpollCtl.H.invokeExact(s.errnoState,
          (long) epfd, (long) op, (long) fd, pointer(event), 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("epoll_ctl", t);
    }
    if (r < 0) {
      throw fail("epoll_ctl", s, fdName(fd));
    }
  }

  /**
   * epoll_wait. An EINTR returns 0 (a spurious wakeup the caller's loop absorbs) rather than
   * restarting with the full timeout again.
   */
  static int epollWait(Scratch s, int epfd, MemorySegment events, int max, int timeoutMillis)
      throws ErrnoException {
    int r;
    try {
      r = (int) (long) EpollWait.H.invokeExact(s.errnoState,
          (long) epfd, pointer(events), (long) max, (long) timeoutMillis, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("epoll_wait", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EINTR) {
        return 0;
      }
      throw fail("epoll_wait", s, fdName(epfd));
    }
    return r;
  }

  static int eventfd(Scratch s, int flags) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Eventfd.H.invokeExact(s.errnoState, 0L, (long) flags, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("eventfd", t);
    }
    if (r < 0) {
      throw fail("eventfd", s, null);
    }
    return r;
  }

  /** read(2); -1 when it would block. */
  static long read(Scratch s, int fd, MemorySegment buf, long len) throws ErrnoException {
    long r;
    try {
      do {
        r = (long) Read.H.invokeExact(s.errnoState, (long) fd, pointer(buf), len, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("read", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EAGAIN) {
        return -1;
      }
      throw fail("read", s, fdName(fd));
    }
    return r;
  }

  /** write(2); -1 when it would block. */
  static long write(Scratch s, int fd, MemorySegment buf, long len) throws ErrnoException {
    long r;
    try {
      do {
        r = (long) Write.H.invokeExact(s.errnoState, (long) fd, pointer(buf), len, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("write", t);
    }
    if (r < 0) {
      if (s.errno() == Errno.EAGAIN) {
        return -1;
      }
      throw fail("write", s, fdName(fd));
    }
    return r;
  }

  // --- memory -----------------------------------------------------------------------------------

  static int memfdCreate(Scratch s, MemorySegment name, int flags, String nameText) throws ErrnoException {
    int r;
    try {
      r = (int) (long) MemfdCreate.H.invokeExact(s.errnoState, pointer(name), (long) flags, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("memfd_create", t);
    }
    if (r < 0) {
      throw fail("memfd_create", s, nameText);
    }
    return r;
  }

  static void ftruncate(Scratch s, int fd, long size) throws ErrnoException {
    int r;
    try {
      do {
        r = (int) (long) Ftruncate.H.invokeExact(s.errnoState, (long) fd, size, 0L, 0L, 0L, 0L);
      } while (r < 0 && s.errno() == Errno.EINTR);
    } catch (Throwable t) {
      throw unexpected("ftruncate", t);
    }
    if (r < 0) {
      throw fail("ftruncate", s, fdName(fd) + " size " + size);
    }
  }

  /** fstat(2) st_size. */
  static long fstatSize(Scratch s, int fd) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Fstat.H.invokeExact(s.errnoState, (long) fd, pointer(s.stat), 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("fstat", t);
    }
    if (r < 0) {
      throw fail("fstat", s, fdName(fd));
    }
    return s.stat.get(JAVA_LONG, STAT_SIZE);
  }

  /** mmap(NULL, size, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0); returns the address. */
  static long mmapShared(Scratch s, int fd, long size) throws ErrnoException {
    long r;
    try {
      r = (long) Mmap.H.invokeExact(s.errnoState,
          0L, size, (long) (PROT_READ | PROT_WRITE), (long) MAP_SHARED, (long) fd, 0L);
    } catch (Throwable t) {
      throw unexpected("mmap", t);
    }
    if (r == -1L) {
      throw fail("mmap", s, fdName(fd) + " size " + size);
    }
    return r;
  }

  /**
   * mmap(NULL, size, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0): zeroed
   * memory whose pages the kernel provides on first touch; returns the address.
   */
  static long mmapAnonymous(Scratch s, long size) throws ErrnoException {
    long r;
    try {
      r = (long) Mmap.H.invokeExact(s.errnoState,
          0L, size, (long) (PROT_READ | PROT_WRITE), (long) (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE), -1L, 0L);
    } catch (Throwable t) {
      throw unexpected("mmap", t);
    }
    if (r == -1L) {
      throw fail("mmap", s, "anonymous size " + size);
    }
    return r;
  }

  /** madvise(2) advice (Linux 5.14+): commit the range's pages now, writable, as writes would. */
  static final int MADV_POPULATE_WRITE = 23;

  static void madvise(Scratch s, long address, long size, int advice) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Madvise.H.invokeExact(s.errnoState, address, size, (long) advice, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("madvise", t);
    }
    if (r < 0) {
      throw fail("madvise", s, "address 0x" + Long.toHexString(address) + " size " + size + " advice " + advice);
    }
  }

  static void munmap(Scratch s, long address, long size) throws ErrnoException {
    int r;
    try {
      r = (int) (long) Munmap.H.invokeExact(s.errnoState, address, size, 0L, 0L, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("munmap", t);
    }
    if (r < 0) {
      throw fail("munmap", s, "address 0x" + Long.toHexString(address) + " size " + size);
    }
  }

  // --- raw system calls -------------------------------------------------------------------------

  /**
   * syscall(2) with up to three arguments, for the calls libc has no wrapper for (membarrier): the
   * raw result, -1 with errno in {@code s} on failure. No EINTR loop: whether a call can be
   * interrupted is the caller's to know.
   */
  static long syscall(Scratch s, long number, long arg1, long arg2, long arg3) {
    try {
      return (long) Syscall.H.invokeExact(s.errnoState, number, arg1, arg2, arg3, 0L, 0L);
    } catch (Throwable t) {
      throw unexpected("syscall", t);
    }
  }
}
