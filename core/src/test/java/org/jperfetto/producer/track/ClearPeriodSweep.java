package org.jperfetto.producer.track;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.jperfetto.tracing.TraceConfigs;

/**
 * Measures what a clear period costs and buys on a wrapping ring buffer (scripts/clear-period-sweep.sh
 * runs it; docs/flight-recorder.md has the figures): for each period, rounds interleaved, a session
 * with one ring of RING_KB records {@link RingWorkload} (THREADS threads, RATE slices/s each) for
 * SECONDS (plus up to 2 s at random, so that the recording ends anywhere between two clears); per
 * run one line with the bytes the producer wrote per slice, the process's CPU per 1000
 * slices (producer and service together), the share of the ring's slice begins trace_processor can
 * read and how many seconds of the end of the recording that is. Period 0: never cleared.
 *
 * <pre>ClearPeriodSweep RING_KB THREADS RATE SECONDS ROUNDS PERIOD_MS...</pre>
 */
public final class ClearPeriodSweep {
  private static final int BURST = 10;

  private ClearPeriodSweep() {}

  public static void main(String[] args) throws Exception {
    int ringKb = Integer.parseInt(args[0]);
    int threads = Integer.parseInt(args[1]);
    int rate = Integer.parseInt(args[2]);
    int seconds = Integer.parseInt(args[3]);
    int rounds = Integer.parseInt(args[4]);
    int[] periods = Arrays.stream(args, 5, args.length).mapToInt(Integer::parseInt).toArray();
    long pauseMs = Math.max(1, 1000L * BURST / rate);
    TrackEvent te = TrackEvent.builder().categories(RingWorkload.CATEGORY).build();
    System.out.printf("ring_kb=%d threads=%d slices_per_s_per_thread=%d seconds=%d%n", ringKb, threads,
        1000L * BURST / pauseMs, seconds);
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("clear-period-sweep").dataSource(te.dataSource()))) {
      run(tracing, te, ringKb, threads, pauseMs, 2, 250); // warm-up, not printed
      for (int r = 1; r <= rounds; r++) {
        for (int period : periods) {
          Result x = run(tracing, te, ringKb, threads, pauseMs, seconds, period);
          double sliceRate = x.emitted / (x.elapsedNanos / 1e9);
          System.out.printf("round=%d period_ms=%d bytes_per_slice=%.2f cpu_us_per_1k_slices=%.0f "
                  + "readable_share=%.4f readable_s=%.2f ring_s=%.2f clears_in_ring=%d%n", r, period,
              (double) x.wrapped.bytesWritten() / x.emitted, x.cpuNanos / 1e3 / (x.emitted / 1e3),
              x.wrapped.readableShare(), x.wrapped.readableBegins() / sliceRate,
              x.wrapped.beginsInFile() / sliceRate, x.wrapped.clears());
        }
      }
    }
  }

  private record Result(long emitted, long elapsedNanos, long cpuNanos, RingWorkload.Wrapped wrapped) {}

  /** CPU time of this process so far (all threads: the producer's and the service's). */
  private static long cpuNanos() {
    return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
  }

  private static Result run(InProcessTracing tracing, TrackEvent te, int ringKb, int threads, long pauseMs,
      int seconds, int periodMs) throws Exception {
    InProcessSession s = tracing.newSession(TraceConfigs.builder().trackEvent().bufferSizeKb(ringKb)
        .clearPeriod(Duration.ofMillis(periodMs)).build()).start();
    long cpu0 = cpuNanos();
    long t0 = System.nanoTime();
    RingWorkload load = new RingWorkload(te, threads, BURST, pauseMs);
    // Up to 2 s more, at random: the end of the recording falls anywhere between two clears.
    Thread.sleep(seconds * 1000L + ThreadLocalRandom.current().nextInt(2000));
    long emitted = Arrays.stream(load.stop()).sum();
    long elapsed = System.nanoTime() - t0;
    s.stop();
    long cpu = cpuNanos() - cpu0;
    return new Result(emitted, elapsed, cpu, RingWorkload.Wrapped.of(s.readTrace()));
  }
}
