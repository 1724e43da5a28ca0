package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * clock_gettime(2) for the clocks a trace refers to. Reads use the calling thread's native scratch
 * (a struct timespec: two 64-bit words on the 64-bit Linux targets we run on) and allocate nothing.
 */
@SuppressWarnings("restricted") // clock_gettime's downcall, as in Libc
public final class Clocks {
  public static final int CLOCK_REALTIME = 0;
  public static final int CLOCK_MONOTONIC = 1;
  public static final int CLOCK_MONOTONIC_RAW = 4;
  public static final int CLOCK_REALTIME_COARSE = 5;
  public static final int CLOCK_MONOTONIC_COARSE = 6;
  public static final int CLOCK_BOOTTIME = 7;

  private static final MethodHandle CLOCK_GETTIME = clockGettime();

  private Clocks() {}

  private static MethodHandle clockGettime() {
    try {
      return Linker.nativeLinker().downcallHandle(
          Linker.nativeLinker().defaultLookup().find("clock_gettime")
              .orElseThrow(() -> new UnsupportedOperationException("libc has no symbol clock_gettime")),
          FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), Linker.Option.captureCallState("errno"));
    } catch (IllegalCallerException e) {
      throw NativeAccessRefused.explain(e);
    }
  }

  /**
   * The clock's current value in nanoseconds.
   *
   * @throws ErrnoException EINVAL for a clock id the kernel does not know
   */
  public static long nanos(int clockId) throws ErrnoException {
    Scratch s = Scratch.get();
    int r;
    try {
      r = (int) CLOCK_GETTIME.invokeExact(s.errnoState, clockId, s.word);
    } catch (Throwable t) {
      if (t instanceof RuntimeException e) {
        throw e;
      }
      if (t instanceof Error e) {
        throw e;
      }
      throw new IllegalStateException("downcall clock_gettime failed", t);
    }
    if (r < 0) {
      throw new ErrnoException("clock_gettime", s.errno(), "clock " + clockId);
    }
    return s.word.get(JAVA_LONG, 0) * 1_000_000_000L + s.word.get(JAVA_LONG, 8);
  }
}
