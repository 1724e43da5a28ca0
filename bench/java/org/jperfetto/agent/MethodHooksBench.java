package org.jperfetto.agent;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.agent.boot.MethodHooks;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DetachedInstance;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the agent's method slices cost per call: {@link HookedWork#mix} as compiled
 * ({@link #original}) and its copy rewritten as the agent rewrites it ({@link #instrumented}),
 * with {@code session=off} (the agent loaded, nothing recording: the hooks' one branch) and
 * {@code session=on} (a TrackEvent session records jvm.method into an in-process SMB freed at
 * once, so the figure is the slice, not IPC). Both are called through a constant MethodHandle so
 * the JIT inlines them alike.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MethodHooksBench {
  private static final MethodHandle ORIGINAL;
  private static final MethodHandle INSTRUMENTED;
  private static final MethodTable TABLE = new MethodTable();

  static {
    try {
      MethodType type = MethodType.methodType(int.class, int.class);
      ORIGINAL = MethodHandles.lookup().findStatic(HookedWork.class, "mix", type);
      Class<?> copy = InstrumentedCopy.of(HookedWork.class,
          MethodPatterns.parse(List.of(HookedWork.class.getName() + "#mix")), TABLE);
      INSTRUMENTED = MethodHandles.publicLookup().findStatic(copy, "mix", type);
    } catch (ReflectiveOperationException | java.io.IOException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @Param({"off", "on"})
  public String session;

  private DetachedInstance tracing;
  private int x;

  @Setup(Level.Trial)
  public void setUp() {
    MethodSlices slices = new MethodSlices(TABLE);
    TrackEvent te = TrackEvent.builder().categories(MethodSlices.CATEGORY).processName("hooks_bench")
        .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).onSessionsChanged(slices::sessionsChanged).build();
    slices.bind(te);
    MethodHooks.install(slices);
    if (session.equals("on")) {
      tracing = DetachedInstance.start(te.dataSource(), DataSourceConfig.newBuilder()
          .setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0).build());
    }
    if (MethodHooks.isEnabled() != session.equals("on")) {
      throw new IllegalStateException("hooks enabled=" + MethodHooks.isEnabled() + " for session=" + session);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (tracing != null) {
      tracing.close();
    }
  }

  @Benchmark
  public int original() throws Throwable {
    return (int) ORIGINAL.invokeExact(++x);
  }

  @Benchmark
  public int instrumented() throws Throwable {
    return (int) INSTRUMENTED.invokeExact(++x);
  }
}
