package org.jperfetto.producer.track;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jperfetto.os.JitSettle;
import org.jperfetto.producer.DetachedInstance;
import org.jperfetto.protos.DataSourceConfig;

/**
 * {@link TrackEvent#warmUpJit()}: events through private TrackEvents on private in-process SMBs
 * ({@link DetachedInstance}), so that the trace point path is C2 code before an app's first burst.
 *
 * <p>The events come in rounds of at least {@value #ROUND_MILLIS} ms, each on a TrackEvent of its
 * own with new event names, so that what a real session's first events do (no cached thread state,
 * a new writer and sequence, strings interned, a cleared incremental state) keeps happening while
 * the JIT profiles and compiles the path. C2 leaves out a branch the profile never saw taken, and a
 * real session would otherwise throw that code away in the middle of its burst. Each round also
 * writes negative values (ten-byte varints, as a hashed track uuid takes) and, for a while, meets a
 * full SMB (a service that stopped reading), so that the drop path and the way back are compiled too.
 *
 * <p>The rounds go on until at least {@value #EVENTS} events were emitted and the JIT compilers
 * ({@link JitSettle}) used no CPU during {@value #QUIET_ROUNDS} rounds in a row, for at most
 * {@value #MAX_MILLIS} ms, and stop early once a session traces one of the app's own TrackEvents
 * ({@link TrackEvent#liveInstances()}): its events then do the rest of the warm-up, and ours
 * would take a core from them. A fixed count is not enough: in a young JVM C2's queue is long, HotSpot
 * then compiles hot methods at C1 without a profile and raises the bar for C2, and queues a method
 * for C2 only while it runs. A warm-up that stopped early would leave that C2 work, and the
 * profiling that decides what C2 leaves out, to the app's first burst.
 */
final class TrackEventWarmUp {
  /** Events emitted at the least. */
  static final int EVENTS = 200_000;
  /** A round's least duration: long enough for a busy compiler to show in its CPU clock (10 ms ticks). */
  static final long ROUND_MILLIS = 30;
  /** Rounds in a row without compiler CPU after which the warm-up is done. */
  static final int QUIET_ROUNDS = 2;
  /** The whole warm-up's limit. */
  static final long MAX_MILLIS = 3000;
  /** Each round's SMB: 8 pages, which the paused part of a round overflows. */
  static final long SMB_BYTES = 32 * 1024;
  /** Loop iterations (about 5 events each) before a round pauses its "service"... */
  private static final int ITERATIONS_BEFORE_PAUSE = 500;
  /** ...and while it is paused: some 8000 events, more than the SMB holds, so the writer drops. */
  private static final int ITERATIONS_PAUSED = 1600;
  /**
   * Loop iterations between two looks at whether to give way: a few dozen events, well under a
   * millisecond even in C1 code. When it checked only between longer steps, a profile of a cold
   * burst had the warm-up thread still running for up to 190 ms after the app's session started, on
   * a 2-core machine whose other core the JIT compilers held.
   */
  static final int ITERATIONS_PER_GIVE_WAY_CHECK = 8;
  /** Loop iterations between clock reads. */
  private static final int ITERATIONS_PER_CHECK = 500;

  private static final DataSourceConfig CONFIG =
      DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0).build();

  private long events;
  private long i;

  private TrackEventWarmUp() {}

  /** Runs the rounds on the calling thread until done or a session traces an app's TrackEvent; returns the events. */
  static long run() {
    return run(() -> TrackEvent.liveInstances() > 0);
  }

  /** Runs the rounds on the calling thread until done or giveWay says so; returns the events emitted. */
  static long run(BooleanSupplier giveWay) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_MILLIS);
    JitSettle.Compilers jit = JitSettle.Compilers.ofThisJvm();
    TrackEventWarmUp w = new TrackEventWarmUp();
    int quiet = 0;
    for (int round = 0; System.nanoTime() - deadline < 0 && !giveWay.getAsBoolean(); round++) {
      long ticks = jit.ticks();
      w.round(round, deadline, giveWay);
      long after = jit.ticks();
      quiet = after >= 0 && after == ticks ? quiet + 1 : 0;
      if (w.events >= EVENTS && (quiet >= QUIET_ROUNDS || after < 0)) {
        break; // compiled (or the compilers cannot be watched: the count alone decides)
      }
    }
    return w.events;
  }

  /**
   * One round: a new TrackEvent, a while with its SMB full, then events until the round's time is
   * up. Gives way within {@value #ITERATIONS_PER_GIVE_WAY_CHECK} iterations.
   */
  private void round(int round, long deadline, BooleanSupplier giveWay) {
    Round e = new Round(round);
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROUND_MILLIS);
    if (end - deadline > 0) {
      end = deadline;
    }
    try (DetachedInstance instance = DetachedInstance.start(e.te.dataSource(), CONFIG, SMB_BYTES)) {
      boolean more = iterations(e, ITERATIONS_BEFORE_PAUSE, giveWay);
      if (more) {
        instance.pauseDrain();
        more = iterations(e, ITERATIONS_PAUSED, giveWay);
        instance.resumeDrain();
      }
      // At least one step after the pause, even when the round's time is up: the writer's way back
      // from dropping happens on the first events after resumeDrain.
      while (more) {
        more = iterations(e, ITERATIONS_PER_CHECK, giveWay) && System.nanoTime() - end < 0;
      }
      e.te.flush();
    }
  }

  /** Runs n iterations, or fewer if giveWay says so (then returns false). */
  private boolean iterations(Round e, int n, BooleanSupplier giveWay) {
    for (int k = 0; k < n; k++) {
      if (k % ITERATIONS_PER_GIVE_WAY_CHECK == 0 && giveWay.getAsBoolean()) {
        return false;
      }
      events += e.iteration(i++);
    }
    return true;
  }

  /** One round's TrackEvent and the names its events use. */
  private static final class Round {
    final Category slices = Category.of("jperfetto.warmup");
    final Category counters = Category.of("jperfetto.warmup.counter");
    final Track counterTrack;
    final TrackEvent te;
    final String outer;
    final String inner;
    final String instant;
    final String arg;

    Round(int round) {
      counterTrack = Track.counter("jperfetto.warmup." + round);
      te = TrackEvent.builder().categories(slices, counters).processName("jperfetto-warmup").warmUp().build();
      outer = "warmup_slice_" + round;
      inner = "warmup_inner_" + round;
      instant = "warmup_instant_" + round;
      arg = "i" + round;
    }

    /**
     * The usual shapes: slices with and without an argument, a counter and an instant every 10th
     * (every other time with a negative value), and a large counter value every 30th (a packet that
     * reaches its fourth long).
     */
    int iteration(long i) {
      te.begin(slices, outer, arg, i);
      te.begin(slices, inner);
      te.end(slices);
      int n = 4;
      if (i % 10 == 0) {
        long value = i % 20 == 0 ? -i : i;
        te.counter(counters, counterTrack, value);
        te.instant(slices, instant, arg, value);
        n += 2;
        if (i % 30 == 0) {
          te.counter(counters, counterTrack, (i | 1) << 32);
          n++;
        }
      }
      te.end(slices);
      return n;
    }
  }
}
