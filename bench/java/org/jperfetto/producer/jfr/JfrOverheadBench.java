package org.jperfetto.producer.jfr;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordingStream;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ipc.ServiceHost;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the jvm.jfr data source costs an app: an allocation-heavy, a lock-heavy and a CPU-bound
 * workload with no tracing ({@code none}), with a JFR RecordingStream of the same settings whose
 * events are dropped ({@code jfr}), with the bridge writing them into jtraced through a session
 * ({@code bridge}, Java stack samples on at JFR's default 20 ms), and the same without the stack
 * samples ({@code bridgeNoSamples}); {@code jfrNoSamples} is {@code jfr} without the samples, so
 * jfr against jfrNoSamples is what JFR's own sampling costs. The first two workloads allocate by
 * design; compare ns/op between modes. The stack samples' cost is cpuBound's bridge against bridgeNoSamples.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class JfrOverheadBench {
  /** The default groups, with locks at 1 ms so that the lock workload does produce events. */
  static final String CONFIG = "groups=default lock_threshold=1ms";
  /** The same without the samples group. */
  static final String CONFIG_NO_SAMPLES = "groups=default,-samples lock_threshold=1ms";

  @Param({"none", "jfr", "jfrNoSamples", "bridge", "bridgeNoSamples"})
  public String mode;

  private RecordingStream stream;
  private Path dir;
  private ServiceHost host;
  private TracingProducer producer;
  private TracingConsumer consumer;
  private final Object lock = new Object();
  private long shared;
  static volatile Object sink;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    switch (mode) {
      case "none" -> { }
      case "jfr", "jfrNoSamples" -> {
        stream = new RecordingStream();
        stream.setSettings(JfrConfig.parse(mode.equals("jfr") ? CONFIG : CONFIG_NO_SAMPLES).settings());
        stream.onEvent(e -> sink = e);
        stream.startAsync();
      }
      case "bridge", "bridgeNoSamples" -> {
        String config = mode.equals("bridge") ? CONFIG : CONFIG_NO_SAMPLES;
        dir = Files.createTempDirectory("jfr-bench");
        String p = dir.resolve("p.sock").toString();
        String c = dir.resolve("c.sock").toString();
        host = ServiceHost.start(ServiceHost.Options.of(p, c));
        producer = TracingProducer.builder("jfr-bench").socketPath(p).start();
        var ds = JfrDataSource.register(producer);
        if (!producer.awaitConnected(Duration.ofSeconds(10))) {
          throw new IllegalStateException("producer did not connect");
        }
        consumer = TracingConsumer.connect(c);
        TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
            .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(64 * 1024)
                .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
            .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
                DataSourceConfig.newBuilder().setName(JfrDataSource.NAME).setLegacyConfig(config)))
            .build());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ds.isEnabled() && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        if (!ds.isEnabled()) {
          throw new IllegalStateException("jvm.jfr not enabled: " + session);
        }
      }
      default -> throw new IllegalArgumentException("mode " + mode);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    if (stream != null) {
      stream.close();
    }
    if (consumer != null) {
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      consumer.close();
      producer.close();
      host.close();
    }
  }

  /** 1000 short-lived 64-byte arrays: young collections every few milliseconds. */
  @Benchmark
  @SuppressWarnings("exports") // JMH's Blackhole is on the class path; only JMH calls this
  public void allocationHeavy(Blackhole bh) {
    for (int i = 0; i < 1000; i++) {
      bh.consume(new byte[64]);
    }
  }

  /**
   * Pure computation on one thread (a sampled thread running JIT-compiled Java), no allocation. Its
   * thread's CPU time over each iteration (from /proc/thread-self/schedstat, read by the iteration's
   * set-up and tear-down, which run on the benchmark thread) is printed per op ("cpu us/op"): on a
   * loaded machine the wall time per op mostly says how often the thread was scheduled out, while
   * the thread's CPU time still holds what sampling costs it (on JDK 25 the sampled thread walks its
   * own stack).
   */
  @Benchmark
  public long cpuBound() {
    long x = shared | 1;
    for (int i = 0; i < 100_000; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    cpuOps++;
    return x;
  }

  private long cpuAtStart;
  private long cpuOps;

  @Setup(Level.Iteration)
  public void resetCpu() throws java.io.IOException {
    cpuAtStart = threadCpuNanos();
    cpuOps = 0;
  }

  @TearDown(Level.Iteration)
  public void printCpu() throws java.io.IOException {
    if (cpuOps > 0) {
      System.out.printf("[cpu us/op: %.1f over %d ops]%n", (threadCpuNanos() - cpuAtStart) / 1e3 / cpuOps, cpuOps);
    }
  }

  /** The calling thread's time on a CPU so far (the first field of its schedstat). */
  private static long threadCpuNanos() throws java.io.IOException {
    String s = Files.readString(Path.of("/proc/thread-self/schedstat"));
    return Long.parseLong(s.substring(0, s.indexOf(' ')));
  }

  /** Two threads take turns on one monitor around a little work. */
  @Benchmark
  @Threads(2)
  public long lockHeavy() {
    synchronized (lock) {
      Blackhole.consumeCPU(200);
      return ++shared;
    }
  }
}
