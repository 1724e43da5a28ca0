package org.jperfetto.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.os.Threads;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceConfig.BufferConfig.FillPolicy;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.jperfetto.tracing.TraceConfigs;

/**
 * jtraced's JIT warm-up, run beside the real service once that serves, never before: on a thread
 * of its own at the lowest priority, a throwaway in-process service (a {@link InProcessTracing}:
 * the real ServiceHost on sockets in a private directory, and the real producer with TrackEvent)
 * records a few sessions of reference-workload slices into a small buffer and reads them back. The
 * JIT compiles methods, not instances: when the service code that ingests CommitData into a
 * TraceBuffer and reads it out has run that often here, the real service's first burst meets it
 * compiled. Then everything it made is closed: its service, producer, sockets and directory, and
 * its threads end.
 *
 * <p>Why: a 256 KiB SMB fills in about 2 ms of a C++ app's burst; a cold JVM serves the first
 * burst interpreted or in C1 code while C2 takes the core the service's loop needs
 * (docs/performance.md, "jtraced as a daemon"). Real clients never wait for it: the real service
 * serves from the start, at its normal priority, and this thread and the threads it starts (which
 * inherit its nice value) take the CPU only when nothing else wants it.
 *
 * <p>Only the jtraced daemon runs it, not the service {@code jperfetto} embeds;
 * {@code JPERFETTO_WARMUP=0} leaves it out.
 */
final class JtracedWarmUp implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(JtracedWarmUp.class.getName());
  /** JPERFETTO_WARMUP=0 leaves the warm-up out. */
  static final String ENV = "JPERFETTO_WARMUP";
  static final String THREAD_NAME = "jtraced-warmup";
  /** The SMB a system service hands out by default: the size a C++ app's burst commits through. */
  static final int SMB_BYTES = 256 * 1024;
  /** The warm-up's buffer: small; the ring sessions wrap it, the DISCARD ones fill it once. */
  static final int BUFFER_KB = 4 * 1024;
  /** Enough, on this project's 2-core machine, for C2 to compile the ingest and read-out path. */
  static final int DEFAULT_SESSIONS = 8;
  static final int DEFAULT_SLICES_PER_SESSION = 100_000;
  /** How long close() waits for a warm-up in progress to clean up after itself. */
  private static final long STOP_WAIT_MS = 3_000;

  private static final Track COUNTER = Track.counter("warmup_counter");

  /** Warm-ups started in this process (tests tell that one did not run). */
  static final AtomicInteger STARTED = new AtomicInteger();

  /** What a warm-up did. */
  record Result(int sessions, long slices, long traceBytes, boolean lowPriority, boolean stopped, long elapsedMs) {}

  private final int sessions;
  private final int slicesPerSession;
  private final Runnable whenDone;
  private final Thread thread;
  private volatile boolean stop;
  private volatile Result result;
  private volatile Throwable failure;
  private volatile Path directory;

  private JtracedWarmUp(int sessions, int slicesPerSession, Runnable whenDone) {
    this.sessions = sessions;
    this.slicesPerSession = slicesPerSession;
    this.whenDone = whenDone;
    this.thread = Thread.ofPlatform().name(THREAD_NAME).daemon().unstarted(this::run);
  }

  /** Whether env asks for the warm-up (all but JPERFETTO_WARMUP=0 do). */
  static boolean wanted(Map<String, String> env) {
    return !"0".equals(env.getOrDefault(ENV, "").strip());
  }

  /** The daemon's warm-up, started; whenDone runs on its thread once it ended, however it ended. */
  static JtracedWarmUp start(Runnable whenDone) {
    return start(DEFAULT_SESSIONS, DEFAULT_SLICES_PER_SESSION, whenDone);
  }

  static JtracedWarmUp start(int sessions, int slicesPerSession, Runnable whenDone) {
    JtracedWarmUp w = new JtracedWarmUp(sessions, slicesPerSession, whenDone);
    STARTED.incrementAndGet();
    w.thread.start();
    return w;
  }

  Thread thread() {
    return thread;
  }

  /** What it did, once its thread ended normally; null before, or if it failed. */
  Result result() {
    return result;
  }

  /** Why it failed, if it did. */
  Throwable failure() {
    return failure;
  }

  /** The private service's socket directory, once it exists (removed when the warm-up ends). */
  Path directory() {
    return directory;
  }

  /** Waits at most millis for it to end; true if it has. */
  boolean await(long millis) throws InterruptedException {
    thread.join(millis);
    return !thread.isAlive();
  }

  /**
   * Stops it between two batches of slices and waits (a few seconds at most) for it to close what it
   * made, so that stopping jtraced leaves no directory behind.
   */
  @Override
  public void close() {
    stop = true;
    try {
      thread.join(STOP_WAIT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      // Before anything starts a thread: the private service's loop and the producer's threads
      // inherit this thread's nice value.
      boolean low = Threads.setCurrentNice(Threads.LOWEST_NICE);
      result = warmUp(low);
      LOG.log(Level.DEBUG, () -> "JIT warm-up done: " + result);
    } catch (IOException | RuntimeException e) {
      failure = e;
      LOG.log(Level.INFO, "JIT warm-up ended early (the service is not affected): " + e.getMessage());
    } finally {
      whenDone.run();
    }
  }

  private Result warmUp(boolean lowPriority) throws IOException {
    long t0 = System.nanoTime();
    // A category belongs to one TrackEvent: each warm-up has its own.
    Category slice = Category.described("jtraced.warmup", "jtraced's JIT warm-up");
    Category counter = Category.described("jtraced.warmup.counter", "jtraced's JIT warm-up counters");
    TrackEvent te = TrackEvent.builder().categories(slice, counter).processName(THREAD_NAME).build();
    TraceConfig base = TraceConfigs.builder().trackEvent(slice.name(), counter.name())
        .bufferSizeKb(BUFFER_KB).build();
    long slices = 0;
    long bytes = 0;
    int done = 0;
    try (InProcessTracing tracing = InProcessTracing.start(TracingProducer.builder(THREAD_NAME)
        .smbSizeHint(SMB_BYTES).dataSource(te.dataSource()))) {
      directory = Path.of(tracing.producer().socketPath()).getParent();
      for (int s = 0; s < sessions && !stop; s++) {
        // Both fill policies, as real sessions use both: each has its own branch in the buffer's writes.
        FillPolicy policy = s % 2 == 0 ? FillPolicy.DISCARD : FillPolicy.RING_BUFFER;
        TraceConfig config = base.toBuilder().setBuffers(0, base.getBuffers(0).toBuilder().setFillPolicy(policy))
            .build();
        // Read out as a consumer reads (ReadBuffers), but counted and dropped: kept whole, each
        // trace's copies are arrays larger than the daemon's young generation, allocated straight
        // into the old one, and would hold the heap at hundreds of MB while real sessions run.
        ByteCounter trace = new ByteCounter();
        InProcessSession session = tracing.newSession(config).readInto(trace).start();
        try {
          slices += emit(te, slice, counter);
        } finally {
          session.stop();
        }
        bytes += trace.count;
        done++;
      }
    }
    return new Result(done, slices, bytes, lowPriority, stop, (System.nanoTime() - t0) / 1_000_000);
  }

  /**
   * The reference workload's shape (jperfetto-tools ref-producer, docs/performance.md): a slice with
   * an int debug arg, a counter every 10th.
   */
  private long emit(TrackEvent te, Category slice, Category counter) {
    long i = 0;
    while (i < slicesPerSession && !stop) {
      long end = Math.min(slicesPerSession, i + 1_000);
      for (; i < end; i++) {
        te.begin(slice, "warmup_slice", "i", i);
        if (i % 10 == 0) {
          te.counter(counter, COUNTER, i);
        }
        te.end(slice);
      }
    }
    te.flush();
    return i;
  }

  /** An output stream that keeps only how many bytes it was given. */
  private static final class ByteCounter extends OutputStream {
    long count;

    @Override
    public void write(int b) {
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      count += len;
    }
  }
}
