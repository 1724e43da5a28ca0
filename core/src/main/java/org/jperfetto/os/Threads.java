package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * gettid(2): the kernel's id of the OS thread running the caller. For a virtual thread, that of its
 * carrier at the moment of the call. Linked as a critical downcall (gettid neither blocks nor
 * fails), so a call costs the system call and little more, and allocates nothing.
 *
 * <p>setpriority(2) on that id: Linux keeps a nice value per thread (Java's thread priorities do not
 * reach it unless the JVM is told to), and a thread started afterwards by that thread inherits it.
 */
@SuppressWarnings("restricted") // a downcall, as in Libc
public final class Threads {
  private static final MethodHandle GETTID = gettid();
  private static final MethodHandle SETPRIORITY = setpriority();
  /** setpriority's "which" for a process id, which Linux reads as a thread id. */
  private static final int PRIO_PROCESS = 0;
  /** The lowest priority a nice value gives. */
  public static final int LOWEST_NICE = 19;

  private Threads() {}

  private static MethodHandle gettid() {
    try {
      Linker linker = Linker.nativeLinker();
      return linker.defaultLookup().find("gettid")
          .map(f -> linker.downcallHandle(f, FunctionDescriptor.of(JAVA_INT), Linker.Option.critical(false)))
          .orElse(null);
    } catch (IllegalCallerException e) {
      return null; // native access refused: callers get -1
    }
  }

  private static MethodHandle setpriority() {
    try {
      Linker linker = Linker.nativeLinker();
      return linker.defaultLookup().find("setpriority")
          .map(f -> linker.downcallHandle(f, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT)))
          .orElse(null);
    } catch (IllegalCallerException e) {
      return null;
    }
  }

  /**
   * Sets the calling OS thread's nice value (-20 .. {@link #LOWEST_NICE}); threads it starts from now
   * on inherit it. Lowering the priority needs no privilege. False if it could not be set (no
   * setpriority, native access refused, or the kernel said no, e.g. raising it unprivileged).
   */
  public static boolean setCurrentNice(int nice) {
    int tid = currentTid();
    MethodHandle h = SETPRIORITY;
    if (h == null || tid < 0) {
      return false;
    }
    try {
      return (int) h.invokeExact(PRIO_PROCESS, tid, nice) == 0;
    } catch (Throwable t) {
      throw new IllegalStateException("downcall setpriority failed", t);
    }
  }

  /** The calling OS thread's id, or -1 when libc has no gettid or native access is refused. */
  public static int currentTid() {
    MethodHandle h = GETTID;
    if (h == null) {
      return -1;
    }
    try {
      return (int) h.invokeExact();
    } catch (Throwable t) {
      throw new IllegalStateException("downcall gettid failed", t);
    }
  }
}
