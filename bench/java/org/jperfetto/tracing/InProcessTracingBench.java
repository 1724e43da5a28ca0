package org.jperfetto.tracing;

import java.util.concurrent.TimeUnit;
import jdk.jfr.Category;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import jdk.jfr.StackTrace;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
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
 * A slice as an application pays for it with the tracer it has at hand, side by side in one run:
 * <ul>
 *   <li>{@code jperfetto}: {@link TrackEvent} begin+end through {@link InProcessTracing}, the real
 *       embedded jtraced in this JVM with a RING_BUFFER session recording (producer, socket, service
 *       and its trace buffer all live here, so {@code -prof gc}'s bytes per op are the whole
 *       process's, service included);</li>
 *   <li>{@code jfr}: a JFR event begin+commit with a recording on that enables it (no stack trace),
 *       the tracer every JDK ships.</li>
 * </ul>
 * The RING_BUFFER is small (2 MiB) so that reading it out at the end (which JMH counts in the last
 * iteration) stays a negligible share of the bytes per op.
 * Issue 13's targets: jperfetto at 0 B/op and within 1.5x of jfr. {@code sliceWithArg} adds the
 * reference workload's int argument (and its counter every 10th slice for jperfetto).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
// Steady state takes longer here than for a trace point alone: the service's commit and IPC paths
// run once per chunk, not per event, and on a slow 2-core VM C2 was still compiling them
// (-XX:+PrintCompilation) in the first measurement iterations after a 3 x 1 s warm-up.
@Warmup(iterations = 8, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class InProcessTracingBench {
  @Param({"jperfetto", "jfr"})
  public String tracer;

  private final org.jperfetto.producer.track.Category category =
      org.jperfetto.producer.track.Category.of("bench");
  private final Track counterTrack = Track.counter("bench_counter");
  private TrackEvent te;
  private InProcessTracing tracing;
  private InProcessSession session;
  private Recording recording;
  private long i;

  /** The JFR side's slice: begin() and commit() time it, as TrackEvent's begin and end do. */
  @Name("jperfetto.bench.Slice")
  @Label("Slice")
  @Category("jperfetto bench")
  @StackTrace(false)
  static final class SliceEvent extends jdk.jfr.Event {
    @Label("Name")
    String name;
    @Label("i")
    long arg;
  }

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    if (tracer.equals("jfr")) {
      recording = new Recording();
      recording.enable(SliceEvent.class).withoutStackTrace().withThreshold(java.time.Duration.ZERO);
      recording.setToDisk(false);
      recording.start();
      return;
    }
    te = TrackEvent.builder().categories(category).processName("in_process_bench")
        .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).build();
    tracing = InProcessTracing.start(TracingProducer.builder("in-process-bench").dataSource(te.dataSource()));
    session = tracing.newSession(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(2 * 1024)
            .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
            DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME)))
        .build()).start();
    if (!category.isEnabled()) {
      throw new IllegalStateException("category bench not enabled by the session");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    if (recording != null) {
      recording.close();
      return;
    }
    session.stop();
    System.out.printf("%n[in-process trace after stop: %d bytes]%n", session.readTrace().length);
    tracing.close();
  }

  /** A slice begin and end on the thread's track, interned name, two timestamps. */
  @Benchmark
  public void sliceBeginEnd() {
    if (te != null) {
      te.begin(category, "slice");
      te.end(category);
    } else {
      SliceEvent e = new SliceEvent();
      e.begin();
      e.name = "slice";
      e.commit();
    }
  }

  /** The reference workload's slice: one int argument (and, for jperfetto, a counter every 10th). */
  @Benchmark
  public void sliceWithArg() {
    long v = ++i;
    if (te != null) {
      te.begin(category, "ref_slice", "i", v);
      if (v % 10 == 0) {
        te.counter(category, counterTrack, v);
      }
      te.end(category);
    } else {
      SliceEvent e = new SliceEvent();
      e.begin();
      e.name = "ref_slice";
      e.arg = v;
      e.commit();
    }
  }
}
