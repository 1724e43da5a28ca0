package org.jperfetto.producer.jfr;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Pins a virtual thread on JDK 24+, where blocking in {@code synchronized} no longer does: the
 * virtual thread calls libc's qsort through FFM with a Java comparator (an upcall), and the
 * comparator sleeps. With qsort's native frame on the stack the virtual thread cannot unmount, so
 * the sleep blocks its carrier and JFR records jdk.VirtualThreadPinned ("Native or VM frame on
 * stack") lasting about the sleep. The comparator records the carrier's Linux tid (a pinned virtual
 * thread runs on its carrier's OS thread, so /proc/thread-self is the carrier).
 */
@SuppressWarnings("restricted") // qsort's downcall and its comparator's upcall
final class VirtualThreadWorkload {
  static final String NAME = "jfr-pinner";

  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
  private static final Linker LINKER = Linker.nativeLinker();
  private static final MethodHandle QSORT = LINKER.downcallHandle(
      LINKER.defaultLookup().find("qsort").orElseThrow(),
      FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
          ValueLayout.ADDRESS));
  private static final FunctionDescriptor COMPARATOR = FunctionDescriptor.of(INT,
      ValueLayout.ADDRESS.withTargetLayout(INT), ValueLayout.ADDRESS.withTargetLayout(INT));

  private static volatile long sleepMillis;
  private static volatile long carrierTid;
  private static volatile long pinnedNanos;

  /** The carrier's tid seen inside the last pin. */
  static long carrierTid() {
    return carrierTid;
  }

  /** How long the last pin's sleep took, measured in the comparator. */
  static long pinnedNanos() {
    return pinnedNanos;
  }

  /** qsort's comparator: sleeps (pinned), then compares. */
  static int compare(MemorySegment a, MemorySegment b) {
    carrierTid = JvmWorkload.currentTid();
    long t0 = System.nanoTime();
    try {
      Thread.sleep(sleepMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    pinnedNanos = System.nanoTime() - t0;
    return Integer.compare(a.get(INT, 0), b.get(INT, 0));
  }

  /**
   * Runs one virtual thread named {@link #NAME} that sorts two ints with qsort, so the comparator
   * runs (and sleeps millis, pinned) exactly once. Returns the virtual thread's Java id.
   */
  static long pinOnce(long millis) throws InterruptedException {
    sleepMillis = millis;
    Throwable[] failure = new Throwable[1];
    Thread vt = Thread.ofVirtual().name(NAME).start(() -> {
      try (Arena arena = Arena.ofConfined()) {
        MethodHandle cmp = MethodHandles.lookup().findStatic(VirtualThreadWorkload.class, "compare",
            MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class));
        MemorySegment stub = LINKER.upcallStub(cmp, COMPARATOR, arena);
        MemorySegment ints = arena.allocateFrom(INT, 2, 1);
        QSORT.invokeExact(ints, 2L, INT.byteSize(), stub);
        if (ints.getAtIndex(INT, 0) != 1) {
          throw new IllegalStateException("qsort did not sort");
        }
      } catch (Throwable t) {
        failure[0] = t;
      }
    });
    vt.join();
    if (failure[0] != null) {
      throw new IllegalStateException("pinning virtual thread failed", failure[0]);
    }
    return vt.threadId();
  }
}
