package org.jperfetto.producer.track;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DetachedInstance;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TrackEventConfig;

/**
 * The {@link TrackEventBench} trace points timed by this thread's CPU time instead of wall time, best
 * batch of many: on a shared machine time spent descheduled does not count, so back-to-back runs
 * compare far better than JMH's wall-clock averages. Not a JMH benchmark (no -prof gc: use
 * TrackEventBench for allocation). Run as a main class on the test class path, e.g.
 * {@code java --enable-native-access=ALL-UNNAMED -cp target/test-classes:target/classes:<deps>
 * org.jperfetto.producer.track.TrackEventCpuTime [seconds per case [case name]]}; one case per
 * JVM keeps the JIT's profiles apart.
 */
@SuppressWarnings("restricted") // clock_gettime's downcall
public final class TrackEventCpuTime {
  private static final int BATCH = 100_000;
  private static final int CLOCK_THREAD_CPUTIME_ID = 3;
  private static final MethodHandle CLOCK_GETTIME = Linker.nativeLinker().downcallHandle(
      Linker.nativeLinker().defaultLookup().find("clock_gettime").orElseThrow(),
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
  private static final MemorySegment TIMESPEC = Arena.global().allocate(16, 8);

  /** This thread's CPU time in ns (clock_gettime(CLOCK_THREAD_CPUTIME_ID)). */
  private static long threadCpuNanos() {
    try {
      int rc = (int) CLOCK_GETTIME.invokeExact(CLOCK_THREAD_CPUTIME_ID, TIMESPEC);
      if (rc != 0) {
        throw new IllegalStateException("clock_gettime failed");
      }
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
    return TIMESPEC.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + TIMESPEC.get(ValueLayout.JAVA_LONG, 8);
  }

  private final Category enabled = Category.of("bench");
  private final Category disabled = Category.of("bench.off");
  private final Track counterTrack = Track.counter("bench_counter");
  private final TrackEvent te = TrackEvent.builder().categories(enabled, disabled).processName("track_bench")
      .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).build();
  private long i;

  private void op(int which) {
    switch (which) {
      case 0 -> te.begin(disabled, "never");
      case 1 -> {
        te.begin(enabled, "slice");
        te.end(enabled);
      }
      case 2 -> {
        long v = ++i;
        te.instant(enabled, "instant", "a", v, "b", -v);
      }
      case 3 -> te.counter(enabled, counterTrack, ++i);
      default -> TrackEventBench.sliceMix(te, enabled, counterTrack, ++i);
    }
  }

  public static void main(String[] args) {
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
    String[] names = {"disabledCategory", "sliceBeginEnd", "instantWithTwoDebugArgs", "counter",
        "sliceWithArgAndCounterEvery10th"};
    for (int which = 0; which < names.length; which++) {
      if (args.length > 1 && !names[which].equals(args[1])) {
        continue;
      }
      TrackEventCpuTime b = new TrackEventCpuTime();
      try (DetachedInstance _ = DetachedInstance.start(b.te.dataSource(), DataSourceConfig.newBuilder()
          .setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0)
          .setTrackEventConfig(TrackEventConfig.newBuilder().addDisabledCategories("bench.off")).build())) {
        long best = Long.MAX_VALUE;
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        int batches = 0;
        while (System.nanoTime() < deadline || batches < 20) {
          long t0 = threadCpuNanos();
          for (int k = 0; k < BATCH; k++) {
            b.op(which);
          }
          long t = threadCpuNanos() - t0;
          if (batches++ >= 10) { // the first batches warm up
            best = Math.min(best, t);
          }
        }
        b.te.flush();
        System.out.printf("%-34s %8.2f ns/op (best of %d batches of %d, cpu time)%n", names[which],
            (double) best / BATCH, batches - 10, BATCH);
      }
    }
  }
}
