package org.jperfetto.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;

/**
 * jtraced's log lines on stderr, {@code jtraced LEVEL logger: message}, then the stack trace of a
 * thrown exception if any. Not ConsoleHandler with SimpleFormatter: SimpleFormatter checks its
 * format string by formatting the current time, which loads the time-zone database, a cost a
 * daemon's start should not pay for a format that prints no time.
 */
final class JtracedLogHandler extends Handler {
  JtracedLogHandler() {
    setFormatter(new LineFormatter());
  }

  @Override
  public void publish(LogRecord record) {
    if (!isLoggable(record)) {
      return;
    }
    String line;
    try {
      line = getFormatter().format(record);
    } catch (RuntimeException e) {
      line = "jtraced: cannot format a log record: " + e + System.lineSeparator();
    }
    System.err.print(line);
    System.err.flush();
  }

  @Override
  public void flush() {
    System.err.flush();
  }

  @Override
  public void close() {
    flush();
  }

  static final class LineFormatter extends Formatter {
    @Override
    public String format(LogRecord record) {
      StringBuilder sb = new StringBuilder(96).append("jtraced ")
          .append(record.getLevel().getLocalizedName()).append(' ')
          .append(record.getLoggerName()).append(": ").append(formatMessage(record));
      if (record.getThrown() != null) {
        StringWriter trace = new StringWriter();
        try (PrintWriter pw = new PrintWriter(trace)) {
          pw.println();
          record.getThrown().printStackTrace(pw);
        }
        sb.append(trace);
      }
      return sb.append(System.lineSeparator()).toString();
    }
  }
}
