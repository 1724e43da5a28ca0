package org.jperfetto.tools;

import com.google.protobuf.TextFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TraceFileWriter;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.TraceConfig;

/**
 * {@code jperfetto-tools aot-training CONFIG [-o FILE]}: the workload of the runtime image's
 * build-time training run (scripts/train-image.sh), in which jtraced writes its AOT cache. It
 * records the session CONFIG describes (a TraceConfig in protobuf text format, e.g.
 * core/src/main/jlink/training.pbtxt) through the service on the consumer socket and, in the same
 * JVM, traces TrackEvents into it through a producer connected to the same service. So jtraced's
 * cache holds what a producer's burst and its read-out make the service run, and this JVM's own
 * cache (beside the tools jar, for ref-producer) what a producer runs. Without cached profiles a
 * producer's trace point and the service's ingest compile from scratch; JDK 25 caches them, so the
 * JIT compiles at once with the cached ones.
 *
 * <p>The events are the common trace point shapes, not one benchmark's: slices with no argument,
 * an integer or a string argument, nested slices, instants, integer and floating point counters,
 * over several names and a few threads' worth of tracks. Their mix matters as much as their shapes:
 * the cache keeps the profile's counts, and in a young JVM the one C2 thread compiles the methods
 * they rank highest first. Slices with no argument or a small int one take the short path and are
 * most of the mix; the shapes that take the general path (a string, a negative or a large int, an
 * instant, a counter) are about a sixth of the events. With three begins in five on the general
 * path, its 0.15-0.4 s compiles came first and a cold burst ran its commonest events at C1 speed
 * until about 1 s of uptime.
 */
final class AotTraining implements Tool {
  static final String NAME = "aot-training";
  /** Events traced at most (several times what the JIT needs to compile the paths). */
  static final long MAX_ITERATIONS = 400_000;
  /** Iterations on one thread before the next takes over. */
  static final long ITERATIONS_PER_THREAD = 20_000;
  static final int WAIT_ENABLED_MS = 20_000;
  /** Added to the session's duration before the training gives up waiting for its end. */
  static final long END_GRACE_MS = 60_000;
  static final long READ_TIMEOUT_MS = 60_000;
  static final String SLICES = "jperfetto.training";
  static final String COUNTERS = "jperfetto.training.counter";
  private static final String[] NAMES = {"parse", "layout", "render", "commit", "io", "wait", "gc", "idle"};

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String usage() {
    return "CONFIG.pbtxt [-o FILE]: the image build's AOT training (records CONFIG while tracing TrackEvents)";
  }

  @Override
  public int run(String[] argv, ToolContext ctx) throws Exception {
    PrintStream err = ctx.err();
    if (!(argv.length == 1 || argv.length == 3 && argv[1].equals("-o"))) {
      err.println("usage: jperfetto-tools " + NAME + " " + usage());
      return Tools.EXIT_ERROR;
    }
    TraceConfig config;
    try {
      config = TextFormat.parse(Files.readString(Path.of(argv[0])), TraceConfig.class);
    } catch (IOException e) {
      err.println("jperfetto-tools " + NAME + ": cannot read " + argv[0] + ": " + e.getMessage());
      return Tools.EXIT_ERROR;
    }
    Category slices = Category.described(SLICES, "AOT training events");
    Category counters = Category.described(COUNTERS, "AOT training counters");
    SessionStart start = new SessionStart(slices); // its counters then from the first iteration
    TrackEvent te = TrackEvent.builder().categories(slices, counters).processName("jperfetto-aot-training")
        .onSessionsChanged(start).build();
    TracingProducer.Builder builder = TracingProducer.builder("jperfetto-aot-training")
        .socketPath(ctx.producerSocket()).dataSource(te.dataSource());
    try (TracingProducer _ = builder.start();
        TracingConsumer consumer = TracingConsumer.connect(ctx.consumerSocket())) {
      TracingSession session = consumer.enableTracing(config);
      long iterations = 0;
      if (awaitEnabled(start, session)) {
        iterations = emit(te, slices, counters);
      } else {
        err.println("jperfetto-tools " + NAME + ": the session never enabled " + SLICES
            + "; the caches get no producer profiles");
      }
      TracingDisabled end = session.disabled()
          .get(Integer.toUnsignedLong(config.getDurationMs()) + END_GRACE_MS, TimeUnit.MILLISECONDS);
      if (!end.ok()) {
        err.println("jperfetto-tools " + NAME + ": the session failed: " + end.error());
        return Tools.EXIT_ERROR;
      }
      long bytes = readOut(consumer, argv.length == 3 ? Path.of(argv[2]) : null);
      err.println("jperfetto-tools " + NAME + ": traced " + iterations
          + " iterations of the common event shapes; read out " + bytes + " bytes");
    }
    return Tools.EXIT_OK;
  }

  /** Reads the session's buffers into file (or nowhere); returns the bytes read. */
  private static long readOut(TracingConsumer consumer, Path file) throws Exception {
    try (OutputStream out = file != null ? Files.newOutputStream(file) : OutputStream.nullOutputStream()) {
      TraceFileWriter writer = new TraceFileWriter(out);
      consumer.readBuffers(writer).get(READ_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      writer.flush();
      return writer.bytesWritten();
    }
  }

  /** Waits for the session to enable the events (false after WAIT_ENABLED_MS, or once it has ended). */
  private static boolean awaitEnabled(SessionStart start, TracingSession session) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT_ENABLED_MS * 1_000_000L;
    while (!start.await(1)) {
      if (session.disabled().isDone() || System.nanoTime() - deadline > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The event mix, until the session ends or MAX_ITERATIONS; returns the iterations run. A new
   * thread takes over every {@value #ITERATIONS_PER_THREAD} iterations, so that what an app thread's
   * first events in a session do (a new writer, sequence and thread state, its tracks described,
   * strings interned again) is in the cached profiles as a branch taken, not one the JIT leaves out
   * and then meets as the app's first burst begins.
   */
  static long emit(TrackEvent te, Category slices, Category counters) throws InterruptedException {
    Track queue = Track.counter("training_queue_depth");
    Track load = Track.counter("training_load");
    long[] done = {0};
    for (int k = 0; done[0] < MAX_ITERATIONS && slices.isEnabled(); k++) {
      long from = done[0];
      long to = Math.min(from + ITERATIONS_PER_THREAD, MAX_ITERATIONS);
      Thread t = Thread.ofPlatform().name("aot-training-" + k).start(() -> {
        done[0] = emit(te, slices, counters, queue, load, from, to);
        te.flush();
      });
      t.join(); // one at a time: the mix, not contention, is what the profiles should hold
    }
    return done[0];
  }

  private static long emit(TrackEvent te, Category slices, Category counters, Track queue, Track load,
      long from, long to) {
    long i = from;
    while (i < to && slices.isEnabled()) {
      String name = NAMES[(int) (i & 7)];
      switch ((int) (i % 16)) {
        case 0 -> te.begin(slices, name, "phase", NAMES[(int) ((i >>> 3) & 7)]);
        case 1 -> te.begin(slices, name, "delta", -i);
        case 2 -> te.begin(slices, name, "size", i << 20);
        case 3, 4, 5, 6, 7, 8, 9 -> te.begin(slices, name, "index", i);
        default -> te.begin(slices, name);
      }
      if ((i & 3) == 0) {
        te.begin(slices, NAMES[(int) ((i + 3) & 7)]);
        te.end(slices);
      }
      if (i % 10 == 0) {
        te.counter(counters, queue, i & 1023);
        if (i % 30 == 0) {
          te.counter(counters, queue, (i | 1) << 32); // a large value: the packet reaches its fourth long
        }
        te.counter(counters, load, (i & 255) / 256.0);
        te.instant(slices, name, "index", i);
      }
      te.end(slices);
      i++;
    }
    return i;
  }
}
