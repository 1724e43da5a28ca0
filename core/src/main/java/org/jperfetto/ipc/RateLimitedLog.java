package org.jperfetto.ipc;

import java.lang.System.Logger.Level;

/**
 * A log line that repeats at most once per interval: the first occurrence is logged at once, the
 * ones within the next interval are only counted, and the next line logged says how many were
 * left out. Keeps an attacker (or a failing system call in a loop) from turning each event into a
 * log line. Not thread-safe: one owner thread (the IPC loop).
 */
final class RateLimitedLog {
  private final System.Logger log;
  private final long intervalNanos;
  private long lastNanos;
  private boolean loggedOnce;
  private long suppressed;

  RateLimitedLog(System.Logger log, long intervalMs) {
    this.log = log;
    this.intervalNanos = intervalMs * 1_000_000L;
  }

  /** Logs {@code message} unless a line was logged less than an interval ago (then counts it). */
  void log(Level level, String message) {
    log(level, message, System.nanoTime());
  }

  /** As {@link #log(Level, String)} at time {@code nowNanos} (tests). Returns whether it logged. */
  boolean log(Level level, String message, long nowNanos) {
    if (loggedOnce && nowNanos - lastNanos < intervalNanos) {
      suppressed++;
      return false;
    }
    String line = suppressed == 0 ? message
        : message + " (" + suppressed + " similar message(s) suppressed)";
    loggedOnce = true;
    lastNanos = nowNanos;
    suppressed = 0;
    log.log(level, line);
    return true;
  }

  /** Occurrences counted but not logged since the last line. */
  long suppressed() {
    return suppressed;
  }
}
