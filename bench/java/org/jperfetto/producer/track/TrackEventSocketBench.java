package org.jperfetto.producer.track;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.TracingProducer;
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
 * The brief's end-to-end figure: one thread writing slices (one int argument, a counter every 10th)
 * through a TracingProducer connected over a real UNIX socket to the test ProducerPort host, which
 * copies every committed chunk into a TraceBuffer and frees it (STALL policy: nothing dropped, so
 * chunk turnover and CommitData are in the figure). The host runs in this JVM: -prof gc counts its
 * allocations (CommitData protobufs) too. Slices/s = 1e9 / (ns/op).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TrackEventSocketBench {
  private final Category enabled = Category.of("bench");
  private final Category disabled = Category.of("bench.off");
  private final Track counterTrack = Track.counter("bench_counter");
  private Path dir;
  private TrackTestHost host;
  private TracingProducer producer;
  private TrackEvent te;
  private long i;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("track-bench");
    String socket = dir.resolve("producer.sock").toString();
    host = new TrackTestHost(socket);
    te = TrackEvent.builder().categories(enabled, disabled).processName("track_bench")
        .bufferExhaustedPolicy(BufferExhaustedPolicy.STALL).build();
    producer = TracingProducer.builder("track-bench").socketPath(socket)
        .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100)).dataSource(te.dataSource()).start();
    host.setUpTracing(64, 4096, 64 << 20);
    TrackTestHost.await("registered", () -> host.registered().contains(TrackEvent.DATA_SOURCE_NAME));
    host.startDataSource(1, TrackEventConfig.newBuilder().addDisabledCategories("bench.off").build());
    TrackTestHost.await("started", () -> enabled.isEnabled());
    if (disabled.isEnabled()) {
      throw new IllegalStateException("bench.off should be disabled");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    producer.close();
    host.close();
    Files.deleteIfExists(dir.resolve("producer.sock"));
    Files.deleteIfExists(dir);
  }

  /** The brief's end-to-end mix: a slice with one int argument, a counter every 10th slice. */
  @Benchmark
  public void sliceWithArgAndCounterEvery10th() {
    TrackEventBench.sliceMix(te, enabled, counterTrack, ++i);
  }
}
