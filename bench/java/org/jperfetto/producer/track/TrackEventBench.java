package org.jperfetto.producer.track;

import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DetachedInstance;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * TrackEvent trace points into a real SMB whose chunks an in-process fake service frees at once
 * ({@link DetachedInstance}): the cost of the trace point itself, chunk turnover included, no IPC.
 * Run with -prof gc: the target is 0 B/op for every trace point. {@link TrackEventSocketBench} has
 * the end-to-end figure.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TrackEventBench {
  private final Category enabled = Category.of("bench");
  private final Category disabled = Category.of("bench.off");
  private final Track counterTrack = Track.counter("bench_counter");
  private DetachedInstance tracing;
  private TrackEvent te;
  private long i;

  @Setup(Level.Trial)
  public void setUp() {
    te = TrackEvent.builder().categories(enabled, disabled).processName("track_bench")
        .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).build();
    tracing = DetachedInstance.start(te.dataSource(), DataSourceConfig.newBuilder()
        .setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0)
        .setTrackEventConfig(TrackEventConfig.newBuilder().addDisabledCategories("bench.off")).build());
    if (!enabled.isEnabled() || disabled.isEnabled()) {
      throw new IllegalStateException("bench should be enabled, bench.off disabled");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    te.flush();
    System.out.printf("%n[chunks committed and freed: %d]%n", tracing.chunksFreed());
    tracing.close();
  }

  @Benchmark
  public void disabledCategory() {
    te.begin(disabled, "never");
  }

  /**
   * The clock floor of a slice: TrackEvent reads System.nanoTime once per event, so a slice pays
   * twice this (a vDSO clock_gettime; JFR reads the TSC itself).
   */
  @Benchmark
  public long nanoTime() {
    return System.nanoTime();
  }

  /** A slice begin and end on the thread track, interned name, two timestamps. */
  @Benchmark
  public void sliceBeginEnd() {
    te.begin(enabled, "slice");
    te.end(enabled);
  }

  @Benchmark
  public void instantWithTwoDebugArgs() {
    long v = ++i;
    te.instant(enabled, "instant", "a", v, "b", -v);
  }

  @Benchmark
  public void counter() {
    te.counter(enabled, counterTrack, ++i);
  }

  /** The brief's end-to-end mix: a slice with one int argument, a counter every 10th slice. */
  @Benchmark
  public void sliceWithArgAndCounterEvery10th() {
    sliceMix(te, enabled, counterTrack, ++i);
  }

  static void sliceMix(TrackEvent te, Category category, Track counterTrack, long v) {
    te.begin(category, "ref_slice", "i", v);
    if (v % 10 == 0) {
      te.counter(category, counterTrack, v);
    }
    te.end(category);
  }
}
