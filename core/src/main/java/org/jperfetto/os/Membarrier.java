package org.jperfetto.os;

/**
 * membarrier(2) with MEMBARRIER_CMD_PRIVATE_EXPEDITED: the heavy half of an asymmetric fence.
 *
 * <p>When {@link #run()} returns, every other thread of this process has passed a full memory
 * barrier (the kernel interrupts the CPUs running them; a thread not running was context-switched,
 * which is a barrier too). So a thread that orders its own store before its own load only against
 * the compiler can still take part in a Dekker-style handshake with a thread that stores, calls
 * {@link #run()}, then loads: at least one of the two sees the other's store.
 *
 * <p>The process registers for the expedited command once, when this class initialises. glibc has
 * no wrapper for membarrier, so the call goes through {@code syscall(2)} ({@link Libc#syscall}).
 * Kernels before 4.14, or a seccomp filter that refuses the call, leave {@link #isAvailable()}
 * false.
 */
public final class Membarrier {
  static final int CMD_QUERY = 0;
  static final int CMD_PRIVATE_EXPEDITED = 1 << 3;
  static final int CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;
  /** __NR_membarrier: 324 on x86_64, 283 on aarch64 (asm-generic). */
  static final long SYS_MEMBARRIER = Libc.X86_64 ? 324 : 283;

  private static final System.Logger LOG = System.getLogger(Membarrier.class.getName());
  private static final boolean AVAILABLE = register();

  private Membarrier() {}

  /** Whether {@link #run()} works in this process. */
  public static boolean isAvailable() {
    return AVAILABLE;
  }

  /**
   * A full barrier on every CPU running a thread of this process, then return.
   *
   * @throws ErrnoException if the kernel refuses (never after a successful registration, short of
   *     a kernel bug)
   * @throws IllegalStateException if {@link #isAvailable()} is false
   */
  public static void run() throws ErrnoException {
    if (!AVAILABLE) {
      throw new IllegalStateException("membarrier PRIVATE_EXPEDITED is not available in this process");
    }
    Scratch s = Scratch.get();
    long r = call(s, CMD_PRIVATE_EXPEDITED);
    if (r < 0) {
      throw new ErrnoException("membarrier", s.errno(), "PRIVATE_EXPEDITED");
    }
  }

  /** The bit mask of commands the kernel supports (MEMBARRIER_CMD_QUERY), or -1 with errno. */
  static long query() {
    return call(Scratch.get(), CMD_QUERY);
  }

  private static boolean register() {
    Scratch s = Scratch.get();
    long supported = call(s, CMD_QUERY);
    if (supported < 0 || (supported & CMD_PRIVATE_EXPEDITED) == 0
        || (supported & CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
      LOG.log(System.Logger.Level.DEBUG, "membarrier PRIVATE_EXPEDITED unsupported: query={0} errno={1}",
          supported, supported < 0 ? s.errno() : 0);
      return false;
    }
    if (call(s, CMD_REGISTER_PRIVATE_EXPEDITED) < 0) {
      LOG.log(System.Logger.Level.DEBUG, "membarrier registration refused: errno={0}", s.errno());
      return false;
    }
    return true;
  }

  /**
   * membarrier(cmd, 0, 0), through libc's shared downcall stub (a handle with a descriptor of its own
   * generated some sixteen classes when a producer answered its first flush request). It is never
   * interrupted (it does not sleep interruptibly), so no EINTR loop.
   */
  private static long call(Scratch s, int cmd) {
    return Libc.syscall(s, SYS_MEMBARRIER, cmd, 0, 0);
  }
}
