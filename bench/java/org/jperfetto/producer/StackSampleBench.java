package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;
import org.jperfetto.producer.jfr.StackSampleEncoder;
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
 * One Java stack sample written by {@link StackSampleEncoder} into a TraceWriter over a real SMB
 * (chunks freed at once by {@link DrainingSink}): the steady state of the jvm.jfr stream thread,
 * where JFR hands over stacks it handed over before. The samples are real: JFR's execution samples
 * of two spinning threads (a shallow and a 40-deep stack), recorded once at set-up and read back
 * from the file; the benchmark cycles through them. {@code clearEvery}: samples between two
 * clears of the incremental state (0: never; jtraced clears a ring-buffer session every second, and
 * a JVM gives about 100 samples a second at the default period), whose cost is in the figure. Run
 * with -prof gc: the target is 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class StackSampleBench {
  private Arena arena;
  private DrainingSink sink;
  private TraceWriter writer;
  private StackSampleEncoder encoder;
  private RecordedThread[] threads;
  private RecordedStackTrace[] stacks;
  private int next;
  private long timestamp;
  private int generation;
  private int sinceClear;

  @Param({"0", "100"})
  public int clearEvery;
  static volatile long spinSink;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    Path file = Files.createTempFile("stack-sample-bench", ".jfr");
    try (Recording r = new Recording()) {
      r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
      r.start();
      Thread a = Thread.ofPlatform().name("bench-shallow").start(() -> spinSink = deep(0));
      Thread b = Thread.ofPlatform().name("bench-deep").start(() -> spinSink = deep(40));
      a.join();
      b.join();
      r.stop();
      r.dump(file);
    }
    List<RecordedThread> t = new ArrayList<>();
    List<RecordedStackTrace> s = new ArrayList<>();
    for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
      if (e.getStackTrace() != null && e.getThread("sampledThread") != null) {
        t.add(e.getThread("sampledThread"));
        s.add(e.getStackTrace());
      }
    }
    Files.delete(file);
    if (s.isEmpty()) {
      throw new IllegalStateException("JFR recorded no execution samples");
    }
    threads = t.toArray(RecordedThread[]::new);
    stacks = s.toArray(RecordedStackTrace[]::new);
    arena = Arena.ofShared();
    sink = DrainingSink.over(arena.allocate(256 * 1024, 4096), 4096);
    writer = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.STALL);
    encoder = new StackSampleEncoder((int) ProcessHandle.current().pid(), 64, false);
  }

  private static long deep(int depth) {
    if (depth > 0) {
      return deep(depth - 1) + 1;
    }
    long x = 1;
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
    while (System.nanoTime() < end) {
      for (int i = 0; i < 10_000; i++) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
      }
    }
    return x;
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    writer.close();
    System.out.printf("%n[samples: %d recorded, %d written, %d by identity, %d callstacks, %d chunks]%n",
        stacks.length, encoder.samples(), encoder.stackHits(), encoder.callstacksInterned(), sink.chunks);
    arena.close();
  }

  @Benchmark
  public boolean sample() {
    int i = next;
    next = i + 1 == stacks.length ? 0 : i + 1;
    if (clearEvery > 0 && ++sinceClear == clearEvery) {
      sinceClear = 0;
      generation++;
    }
    boolean written = encoder.write(timestamp += 20_000_000, threads[i], stacks[i], false, writer, generation);
    writer.finishTracePacket();
    return written;
  }
}
