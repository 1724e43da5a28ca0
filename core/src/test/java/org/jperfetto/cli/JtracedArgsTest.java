package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/** jtraced's command line. */
class JtracedArgsTest {
  @Test
  void flagsInBothSpellings() {
    Jtraced.Args a = Jtraced.parse(new String[] {"--producer-socket", "/a,/b", "--consumer-socket=/c",
        "--consumer-socket-mode", "0660", "--background", "--log-file=/tmp/x.log", "-v"});
    assertEquals("/a,/b", a.producerSockets());
    assertEquals("/c", a.consumerSocket());
    assertEquals(0660, a.consumerSocketMode());
    assertTrue(a.background());
    assertEquals("/tmp/x.log", a.logFile());
    assertEquals(Level.FINE, a.logLevel());
  }

  @Test
  void defaults() {
    Jtraced.Args a = Jtraced.parse(new String[0]);
    assertEquals(0600, a.consumerSocketMode());
    assertFalse(a.background());
    assertEquals(Level.WARNING, a.logLevel());
    assertFalse(a.producerSockets().isEmpty());
    assertEquals(Level.FINEST, Jtraced.parse(new String[] {"--log-level", "trace"}).logLevel());
    assertEquals(org.jperfetto.service.ipc.ServiceHost.defaultMaxBufferBytes(), a.maxBufferBytes());
    assertTrue(a.maxBufferBytes() >= 64L << 20, "half the RAM: " + a.maxBufferBytes());
  }

  @Test
  void defaultClearPeriodOfRingSessions() {
    assertEquals(org.jperfetto.service.ClearPeriod.DEFAULT_MS, Jtraced.parse(new String[0]).defaultClearPeriodMs());
    assertEquals(500, Jtraced.parse(new String[] {"--default-clear-period", "500ms"}).defaultClearPeriodMs());
    assertEquals(2000, Jtraced.parse(new String[] {"--default-clear-period=2s"}).defaultClearPeriodMs());
    assertEquals(0, Jtraced.parse(new String[] {"--default-clear-period=0"}).defaultClearPeriodMs(), "off");
    for (String bad : new String[] {"soon", "50ms", "-1s", "500"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Jtraced.parse(new String[] {"--default-clear-period", bad}));
      assertTrue(e.getMessage().contains("--default-clear-period"), e.getMessage());
    }
  }

  @Test
  void bufferMemoryBudget() {
    assertEquals(2L << 30, Jtraced.parse(new String[] {"--max-buffer-memory", "2gb"}).maxBufferBytes());
    assertEquals(512L << 20, Jtraced.parse(new String[] {"--max-buffer-memory=512m"}).maxBufferBytes());
    assertEquals(1L << 20, Jtraced.parse(new String[] {"--max-buffer-memory", "1048576"}).maxBufferBytes());
    for (String bad : new String[] {"lots", "0", "0mb", "-1gb"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Jtraced.parse(new String[] {"--max-buffer-memory", bad}));
      assertTrue(e.getMessage().contains("--max-buffer-memory"), e.getMessage());
    }
  }

  @Test
  void badInputNamesTheFlag() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Jtraced.parse(new String[] {"--consumer-socket-mode", "999"})).getMessage().contains("octal"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Jtraced.parse(new String[] {"--consumer-socket"})).getMessage().contains("needs a value"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Jtraced.parse(new String[] {"--frobnicate"})).getMessage().contains("--frobnicate"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Jtraced.parse(new String[] {"--log-level", "loud"})).getMessage().contains("loud"));
  }

  @Test
  void relayFlags() {
    Jtraced.Args host = Jtraced.parse(new String[] {"--producer-socket", "/p,0.0.0.0:20000",
        "--enable-relay-endpoint-on", "0.0.0.0:20000"}, null);
    assertEquals(java.util.Set.of("0.0.0.0:20000"), host.relayEndpoints());
    assertEquals(null, host.relayTo());
    assertEquals(java.util.Set.of("/p", "0.0.0.0:20000"),
        Jtraced.parse(new String[] {"--producer-socket", "/p,0.0.0.0:20000", "--enable-relay-endpoint"}, null)
            .relayEndpoints());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Jtraced.parse(new String[] {"--producer-socket",
        "/p", "--enable-relay-endpoint-on", "/q"}, null)).getMessage().contains("/q"));

    assertEquals("10.0.0.1:20000", Jtraced.parse(new String[] {"--relay"}, "10.0.0.1:20000").relayTo());
    assertEquals("h:1", Jtraced.parse(new String[] {"--relay-socket", "h:1"}, "10.0.0.1:20000").relayTo());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Jtraced.parse(new String[] {"--relay"}, null))
        .getMessage().contains("PERFETTO_RELAY_SOCK_NAME"));
  }
}
