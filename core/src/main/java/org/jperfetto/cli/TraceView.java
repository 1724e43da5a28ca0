package org.jperfetto.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jperfetto.consumer.TraceFileReader;

/**
 * {@code jperfetto view [--top N] FILE}: a trace in a terminal, in the spirit of the JDK's {@code jfr
 * summary}: slices by name (count, total, longest, mean), activity by thread, GC pauses by
 * collector, counters, the hottest methods of the Java stack samples, and every loss statistic in
 * words. It reads what
 * trace_processor would read: packets whose sequence lost its interned state are left out (and
 * counted). One streaming pass over the file; memory grows with distinct names and tracks only.
 */
public final class TraceView implements Subcommand {
  static final String NAME = "view";
  static final int DEFAULT_TOP = 20;
  private static final String USAGE = "usage: jperfetto view [--top N] FILE";
  private static final int NAME_WIDTH = 48;
  /** The first column of a table: a name, left-aligned, cut to NAME_WIDTH. */
  private static final String NAME_COL = "  %-" + NAME_WIDTH + "s ";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "a trace in the terminal: slices, threads, GC, counters, hot methods, losses: view [--top N] FILE";
  }

  @Override
  public int run(String[] args, CliContext ctx) throws IOException {
    Path file = null;
    int top = DEFAULT_TOP;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--top") && i + 1 < args.length) {
        try {
          top = Integer.parseInt(args[++i]);
        } catch (NumberFormatException e) {
          top = 0;
        }
        if (top <= 0) {
          ctx.err().println("jperfetto view: --top takes a positive count of rows, e.g. --top 50");
          return Jperfetto.EXIT_ERROR;
        }
      } else if (file == null && !args[i].startsWith("-")) {
        file = Path.of(args[i]);
      } else {
        ctx.err().println(USAGE);
        return Jperfetto.EXIT_ERROR;
      }
    }
    if (file == null) {
      ctx.err().println(USAGE);
      return Jperfetto.EXIT_ERROR;
    }
    if (!Files.isRegularFile(file)) {
      ctx.err().println("jperfetto view: no such trace file: " + file);
      return Jperfetto.EXIT_ERROR;
    }
    TraceTables tables = new TraceTables();
    TraceSummary.Tally tally = new TraceSummary.Tally();
    try (InputStream in = Files.newInputStream(file)) {
      TraceFileReader.forEachPacket(in, p -> tables.add(p, tally.add(p)));
    }
    TraceSummary.Counts counts = tally.counts();
    print(file, Files.size(file), tables, counts, top, ctx.out());
    return Jperfetto.EXIT_OK;
  }

  static void print(Path file, long bytes, TraceTables t, TraceSummary.Counts counts, int top, PrintStream out) {
    long span = t.lastTimestamp >= t.firstTimestamp ? t.lastTimestamp - t.firstTimestamp : 0;
    row(out, "%s: %s, %d packets, %s of events%n", file.getFileName(), bytes(bytes), counts.packets(),
        duration(span));
    if (t.unreadablePackets > 0) {
      row(out, "(%d packets left out: trace_processor cannot read them either; see Losses)%n", t.unreadablePackets);
    }
    slices(t, top, out);
    threads(t, top, out);
    gc(t, out);
    counters(t, top, out);
    samples(t, top, out);
    out.println();
    out.println("Losses");
    for (String s : LossReport.sentences(counts)) {
      out.println("  " + s);
    }
  }

  private static void slices(TraceTables t, int top, PrintStream out) {
    out.println();
    long total = t.slicesByName.values().stream().mapToLong(d -> d.count).sum();
    row(out, "Slices: %d, %d names; %d instants%s%n", total, t.slicesByName.size(), t.instants,
        t.unendedSlices() > 0 ? "; " + t.unendedSlices() + " slices not ended in the trace (not counted)" : "");
    if (total == 0) {
      return;
    }
    row(out, NAME_COL + "%10s %12s %12s %12s%n", "name (by total time)", "count", "total", "max",
        "mean");
    sorted(t.slicesByName, Comparator.comparingLong(d -> d.total), top).forEach(e ->
        row(out, NAME_COL + "%10d %12s %12s %12s%n", cut(e.getKey()), e.getValue().count,
            duration(e.getValue().total), duration(e.getValue().max),
            duration(e.getValue().total / e.getValue().count)));
    more(t.slicesByName.size(), top, out);
  }

  private static void threads(TraceTables t, int top, PrintStream out) {
    Map<String, TraceTables.ThreadActivity> byThread = t.byThread();
    if (byThread.isEmpty()) {
      return;
    }
    out.println();
    row(out, NAME_COL + "%10s %12s %10s%n", "thread or track (by slices)", "slices", "outermost",
        "samples");
    sorted(byThread, Comparator.comparingLong((TraceTables.ThreadActivity a) -> a.slices)
        .thenComparingLong(a -> a.samples), top).forEach(e ->
        row(out, NAME_COL + "%10d %12s %10d%n", cut(e.getKey()), e.getValue().slices,
            duration(e.getValue().topLevel), e.getValue().samples));
    more(byThread.size(), top, out);
  }

  private static void gc(TraceTables t, PrintStream out) {
    if (t.gcPausesByName.isEmpty()) {
      return;
    }
    TraceTables.GcPauses all = new TraceTables.GcPauses();
    t.gcPausesByName.values().forEach(g -> {
      all.collections += g.collections;
      all.total += g.total;
      all.longest = Math.max(all.longest, g.longest);
    });
    out.println();
    row(out, "GC: %d collections, paused %s in all, longest pause %s%n", all.collections, duration(all.total),
        duration(all.longest));
    row(out, NAME_COL + "%10s %12s %12s%n", "collector", "count", "paused", "longest");
    t.gcPausesByName.entrySet().stream()
        .sorted(Map.Entry.<String, TraceTables.GcPauses>comparingByValue(Comparator.comparingLong(g -> g.total))
            .reversed().thenComparing(Map.Entry.comparingByKey()))
        .forEach(e -> row(out, NAME_COL + "%10d %12s %12s%n", cut(e.getKey()), e.getValue().collections,
            duration(e.getValue().total), duration(e.getValue().longest)));
  }

  private static void counters(TraceTables t, int top, PrintStream out) {
    if (t.countersByTrack.isEmpty()) {
      return;
    }
    out.println();
    row(out, NAME_COL + "%10s %12s %12s %12s%n", "counter", "samples", "min", "max", "last");
    t.countersByTrack.entrySet().stream().limit(top).forEach(e ->
        row(out, NAME_COL + "%10d %12s %12s %12s%n", cut(t.counterName(e.getKey())),
            e.getValue().count, number(e.getValue().min), number(e.getValue().max), number(e.getValue().last)));
    more(t.countersByTrack.size(), top, out);
  }

  private static void samples(TraceTables t, int top, PrintStream out) {
    if (t.samples == 0) {
      return;
    }
    out.println();
    row(out, "Stack samples: %d; the methods they were in (leaf frames)%n", t.samples);
    sorted(t.samplesByLeaf, Comparator.<Long>naturalOrder(), top).forEach(e ->
        row(out, NAME_COL + "%10d %6.1f %%%n", cut(e.getKey()), e.getValue(),
            100.0 * e.getValue() / t.samples));
    more(t.samplesByLeaf.size(), top, out);
  }

  private static void row(PrintStream out, String format, Object... args) {
    out.printf(Locale.ROOT, format, args);
  }

  private static <V> List<Map.Entry<String, V>> sorted(Map<String, V> m, Comparator<V> by, int top) {
    return m.entrySet().stream()
        .sorted(Map.Entry.<String, V>comparingByValue(by).reversed().thenComparing(Map.Entry.comparingByKey()))
        .limit(top).toList();
  }

  private static void more(int size, int top, PrintStream out) {
    if (size > top) {
      row(out, "  ... %d more (--top N shows more)%n", size - top);
    }
  }

  private static String cut(String s) {
    String v = s == null ? "?" : s;
    return v.length() <= NAME_WIDTH ? v : v.substring(0, NAME_WIDTH - 3) + "...";
  }

  /** A duration in nanoseconds, in the largest unit that keeps it at 1 or more. */
  static String duration(long ns) {
    if (ns >= 1_000_000_000L) {
      return String.format(Locale.ROOT, "%.2f s", ns / 1e9);
    }
    if (ns >= 1_000_000L) {
      return String.format(Locale.ROOT, "%.2f ms", ns / 1e6);
    }
    if (ns >= 1_000L) {
      return String.format(Locale.ROOT, "%.1f us", ns / 1e3);
    }
    return ns + " ns";
  }

  private static String bytes(long b) {
    return b >= 1 << 20 ? String.format(Locale.ROOT, "%.1f MB", b / 1048576.0)
        : String.format(Locale.ROOT, "%.1f kB", b / 1024.0);
  }

  private static String number(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
  }
}
