package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
  /** Records the lines it is given. */
  static final class Lines implements System.Logger {
    final List<String> lines = new ArrayList<>();

    @Override public String getName() { return "test"; }
    @Override public boolean isLoggable(Level level) { return true; }
    @Override public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) { lines.add(msg); }
    @Override public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(format);
    }
    @Override public void log(Level level, Supplier<String> msgSupplier) { lines.add(msgSupplier.get()); }
  }

  @Test
  void logsOncePerIntervalAndCountsTheRest() {
    Lines out = new Lines();
    RateLimitedLog log = new RateLimitedLog(out, 1000);
    long ms = 1_000_000L;
    assertTrue(log.log(System.Logger.Level.WARNING, "a", 0));
    for (int i = 1; i <= 5; i++) {
      assertFalse(log.log(System.Logger.Level.WARNING, "a", i * 100 * ms));
    }
    assertEquals(5, log.suppressed());
    assertTrue(log.log(System.Logger.Level.WARNING, "b", 1000 * ms));
    assertEquals(List.of("a", "b (5 similar message(s) suppressed)"), out.lines);
    assertEquals(0, log.suppressed());
  }
}
