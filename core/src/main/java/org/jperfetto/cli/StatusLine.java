package org.jperfetto.cli;

import java.io.PrintStream;
import java.util.Locale;
import org.jperfetto.protos.TraceStats;

/**
 * The live line on a terminal while a session runs: elapsed time, bytes the service has taken in
 * and how full the buffers are. Rewritten in place with a carriage return; silent when stderr is
 * not a terminal.
 */
final class StatusLine {
  private final PrintStream err;
  private final boolean enabled;
  private final long startNanos = System.nanoTime();
  private final long durationMs;
  private int lastLength;

  StatusLine(PrintStream err, boolean enabled, long durationMs) {
    this.err = err;
    this.enabled = enabled;
    this.durationMs = durationMs;
  }

  boolean enabled() {
    return enabled;
  }

  void update(TraceStats stats) {
    if (enabled) {
      show(format((System.nanoTime() - startNanos) / 1_000_000, durationMs, stats));
    }
  }

  /** Clears the line (before other messages and at the end). */
  void clear() {
    if (enabled && lastLength > 0) {
      err.print("\r" + " ".repeat(lastLength) + "\r");
      err.flush();
      lastLength = 0;
    }
  }

  private void show(String line) {
    String padded = line.length() < lastLength ? line + " ".repeat(lastLength - line.length()) : line;
    err.print("\r" + padded);
    err.flush();
    lastLength = line.length();
  }

  static String format(long elapsedMs, long durationMs, TraceStats stats) {
    long written = 0;
    long size = 0;
    long held = 0;
    for (TraceStats.BufferStats b : stats.getBufferStatsList()) {
      written += b.getBytesWritten();
      size += b.getBufferSize();
      held += Math.max(0, b.getBytesWritten() - b.getBytesOverwritten() - b.getBytesRead());
    }
    String time = durationMs > 0
        ? String.format(Locale.ROOT, "%.1fs/%.1fs", elapsedMs / 1000.0, durationMs / 1000.0)
        : String.format(Locale.ROOT, "%.1fs", elapsedMs / 1000.0);
    int fill = size > 0 ? (int) Math.min(100, held * 100 / size) : 0;
    return String.format(Locale.ROOT, "[%s] %s written, buffers %d%% full (Ctrl-C to stop)", time,
        bytes(written), fill);
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    if (n < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", n / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MiB", n / (1024.0 * 1024));
  }
}
