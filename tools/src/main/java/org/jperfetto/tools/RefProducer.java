package org.jperfetto.tools;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;

/**
 * {@code jperfetto-tools ref-producer N [counter_every=10] [wait_start_ms=30000] [shmem_kb=0]
 * [linger_ms=2000]}: the Java side of the reference workload (docs/performance.md),
 * with the same arguments and the same result line as the C++ SDK app it is compared with. It
 * connects to the system producer socket, waits for a session that enables category "ref", emits N
 * slices "ref_slice" with debug arg "i" (and a counter "ref_counter" every counter_every-th), flushes,
 * and prints {@code producer: slices=N counters=C emit_s=.. flush_s=.. slices_per_s=R}, timing
 * emit+flush from the first event.
 */
final class RefProducer implements Tool {
  static final String NAME = "ref-producer";
  static final Category REF = Category.described("ref", "Reference producer events");
  static final Category REF_COUNTER = Category.described("ref.counter", "Reference counters");
  static final Track COUNTER = Track.counter("ref_counter");

  /** The parsed arguments, with the C++ app's defaults. */
  record Args(long n, long counterEvery, int waitStartMs, int shmemKb, int lingerMs) {
    static Args parse(String[] a) {
      if (a.length < 1 || a.length > 5) {
        throw new IllegalArgumentException(
            "usage: ref-producer N [counter_every=10] [wait_start_ms=30000] [shmem_kb=0] [linger_ms=2000]");
      }
      return new Args(Long.parseLong(a[0]), a.length > 1 ? Long.parseLong(a[1]) : 10,
          a.length > 2 ? Integer.parseInt(a[2]) : 30_000, a.length > 3 ? Integer.parseInt(a[3]) : 0,
          a.length > 4 ? Integer.parseInt(a[4]) : 2_000);
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String usage() {
    return "N [counter_every] [wait_start_ms] [shmem_kb] [linger_ms]: the reference workload as a producer";
  }

  @Override
  public int run(String[] argv, ToolContext ctx) throws Exception {
    PrintStream err = ctx.err();
    Args args;
    try {
      args = Args.parse(argv);
    } catch (IllegalArgumentException e) {
      err.println("jperfetto-tools ref-producer: " + e.getMessage());
      return Tools.EXIT_ERROR;
    }
    // Started once the session's categories are all set, as the C++ app's session observer: "ref"
    // alone can be on a moment before "ref.counter", and the burst's first counters would be lost.
    SessionStart start = new SessionStart(REF);
    TrackEvent te = TrackEvent.builder().categories(REF, REF_COUNTER).processName("ref-producer")
        .onSessionsChanged(start).build();
    TracingProducer.Builder builder = TracingProducer.builder("ref-producer")
        .socketPath(ctx.producerSocket()).dataSource(te.dataSource());
    if (args.shmemKb() > 0) {
      builder.smbSizeHint(args.shmemKb() * 1024);
    }
    try (TracingProducer _ = builder.start()) {
      err.println("[producer] waiting for track_event session (<= " + args.waitStartMs() + " ms)");
      if (!start.await(args.waitStartMs())) {
        err.println("[producer] tracing did not start, giving up");
        return 2;
      }
      err.println("[producer] tracing started, emitting " + args.n() + " slices");
      Result r = emit(te, args.n(), args.counterEvery());
      ctx.out().println(r.line());
      ctx.out().flush();
      awaitDisabled(args.lingerMs());
      return Tools.EXIT_OK;
    }
  }

  /** What one burst measured. */
  record Result(long slices, long counters, long emitNanos, long flushNanos) {
    String line() {
      double total = (emitNanos + flushNanos) / 1e9;
      return String.format(Locale.ROOT, "producer: slices=%d counters=%d emit_s=%.4f flush_s=%.4f slices_per_s=%.0f",
          slices, counters, emitNanos / 1e9, flushNanos / 1e9, total > 0 ? slices / total : 0.0);
    }
  }

  /** The workload itself: the loop the C++ app runs, then TrackEvent flush. */
  static Result emit(TrackEvent te, long n, long counterEvery) {
    long t0 = System.nanoTime();
    for (long i = 0; i < n; i++) {
      te.begin(REF, "ref_slice", "i", i);
      if (counterEvery > 0 && i % counterEvery == 0) {
        te.counter(REF_COUNTER, COUNTER, i);
      }
      te.end(REF);
    }
    long t1 = System.nanoTime();
    te.flush();
    long t2 = System.nanoTime();
    long counters = counterEvery > 0 ? (n + counterEvery - 1) / counterEvery : 0;
    return new Result(n, counters, t1 - t0, t2 - t1);
  }

  private static void awaitDisabled(int timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMillis(timeoutMs).toNanos();
    while (REF.isEnabled() && System.nanoTime() - deadline < 0) {
      Thread.sleep(5);
    }
  }
}
