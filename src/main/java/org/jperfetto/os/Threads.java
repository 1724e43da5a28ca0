package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * gettid(2): the kernel's id of the OS thread running the caller. For a virtual thread, that of its
 * carrier at the moment of the call. Linked as a critical downcall (gettid neither blocks nor
 * fails), so a call costs the system call and little more, and allocates nothing.
 */
@SuppressWarnings("restricted") // a downcall, as in Libc
public final class Threads {
  private static final MethodHandle GETTID = gettid();

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
