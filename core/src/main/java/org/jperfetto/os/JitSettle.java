package org.jperfetto.os;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Watches this JVM's JIT compilers, so that a warm-up can wait until they have finished the work it
 * queued. When jtraced's ingest warm-up returns, C2 still has a queue of methods to compile (on 2
 * cores about 0.7 s of it); a service that serves at once spends that compiler time during the
 * first producer's burst, on the core the producer or the service's loop needs, and deoptimizes
 * code the burst is running. So jtraced serves once the compiler threads have used no CPU for
 * {@link #QUIET_MS}, or after {@code maxMillis}; TrackEvent's warm-up goes on emitting while they
 * still compile what it ran.
 *
 * <p>The compilers' CPU time comes from /proc/self/task/&lt;tid&gt;/stat of HotSpot's threads named
 * "C1 CompilerThre..." and "C2 CompilerThre..." (the kernel keeps 15 characters of a thread's
 * name). Where there is no such file or thread (another JVM, no procfs), nothing is waited for.
 */
public final class JitSettle {
  /** How long the compilers must stay idle: a few clock ticks (10 ms each), so a compile in progress shows. */
  public static final long QUIET_MS = 60;
  private static final long POLL_MS = 10;
  private static final Path TASKS = Path.of("/proc/self/task");

  private JitSettle() {}

  /** What a wait saw: how long it took, the compilers' CPU meanwhile, and whether they went quiet. */
  public record Result(long waitedMillis, long compilerTicks, boolean quiet) {}

  /** This JVM's JIT compiler threads, found once: polling reads only their stat files. */
  public record Compilers(List<Path> stats) {
    public static Compilers ofThisJvm() {
      return new Compilers(compilerThreadStats());
    }

    /** Whether any compiler thread was found (otherwise nothing is measured or waited for). */
    public boolean known() {
      return ticks() >= 0;
    }

    /** Their CPU so far (utime + stime, clock ticks); -1 if unknown. */
    public long ticks() {
      return cpuTicks(stats);
    }

    /** Waits until they have been idle for {@link #QUIET_MS}, for at most maxMillis. */
    public Result await(long maxMillis) {
      return JitSettle.await(this::ticks, maxMillis);
    }
  }

  /**
   * Waits until ticks (a cumulative CPU counter; negative: unknown) has not grown for {@link
   * #QUIET_MS}, or maxMillis passed.
   */
  static Result await(LongSupplier ticks, long maxMillis) {
    long start = System.nanoTime();
    long first = ticks.getAsLong();
    if (first < 0) {
      return new Result(0, 0, false);
    }
    long last = first;
    long quietSince = start;
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(maxMillis);
    for (;;) {
      long now = System.nanoTime();
      if (now - quietSince >= TimeUnit.MILLISECONDS.toNanos(QUIET_MS)) {
        return new Result(TimeUnit.NANOSECONDS.toMillis(now - start), last - first, true);
      }
      if (now - deadline >= 0) {
        return new Result(TimeUnit.NANOSECONDS.toMillis(now - start), last - first, false);
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return new Result(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), last - first, false);
      }
      long t = ticks.getAsLong();
      if (t != last) {
        last = t;
        quietSince = System.nanoTime();
      }
    }
  }

  /**
   * The stat files of this JVM's JIT compiler threads: polling reads only these, so the wait itself
   * gives the JIT next to nothing to compile.
   */
  static List<Path> compilerThreadStats() {
    List<Path> stats = new ArrayList<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          if (isCompilerThread(Files.readString(task.resolve("comm")).strip())) {
            stats.add(task.resolve("stat"));
          }
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException | UnsupportedOperationException e) {
      return List.of();
    }
    return stats;
  }

  /** utime + stime, in clock ticks, summed over stat files; -1 if none can be read. */
  static long cpuTicks(List<Path> stats) {
    long sum = 0;
    boolean any = false;
    for (Path stat : stats) {
      long t;
      try {
        t = cpuTicks(Files.readString(stat));
      } catch (IOException e) {
        continue; // a compiler thread may end (HotSpot stops idle ones)
      }
      if (t >= 0) {
        sum += t;
        any = true;
      }
    }
    return any ? sum : -1;
  }

  static boolean isCompilerThread(String comm) {
    return comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre");
  }

  /**
   * utime + stime (fields 14 and 15) of a /proc stat line; -1 if it does not parse. The name
   * (field 2) is in parentheses and may hold spaces, so fields are counted after its closing one.
   */
  static long cpuTicks(String stat) {
    int close = stat.lastIndexOf(')');
    if (close < 0) {
      return -1;
    }
    String[] fields = stat.substring(close + 1).trim().split(" ");
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    if (fields.length < 13) {
      return -1;
    }
    try {
      return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
