package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/** The jtraced daemon as a child process: ready line, a session, SIGTERM, clean exit. */
@Timeout(60)
class JtracedIT {
  static final String MAIN = "org.jperfetto.cli.Jtraced";
  @TempDir Path dir;

  static List<String> java(String... args) {
    return ChildJvm.command(MAIN, args);
  }

  static String readyLine(Process p) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    return CompletableFuture.supplyAsync(() -> {
      try {
        return out.readLine();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }).get(30, TimeUnit.SECONDS);
  }

  @Test
  void runsASessionAndExitsCleanlyOnSigterm() throws Exception {
    Path p = dir.resolve("prod.sock");
    Path c = dir.resolve("cons.sock");
    Process daemon = new ProcessBuilder(java("--producer-socket", p.toString(), "--consumer-socket",
        c.toString(), "--consumer-socket-mode", "0660", "--log-level", "info"))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      assertEquals("jtraced: listening on producer=" + p + " consumer=" + c, readyLine(daemon));
      assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(c)));
      try (SocketProducer producer = SocketProducer.connect(p.toString(), "child-test", SessionIT.DS);
          TracingConsumer consumer = TracingConsumer.connect(c.toString())) {
        TracingSession session = consumer.enableTracing(
            SessionIT.config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
        SmbWriter w = producer.startedWriter(1);
        for (int i = 0; i < 5; i++) {
          assertTrue(w.write(SessionIT.packet(3, i, 50), false));
        }
        producer.commit();
        List<TracePacket> packets = SessionIT.stopAndRead(consumer, session);
        assertEquals(SessionIT.range(5), SessionIT.testPackets(packets, SessionIT.uid()).get(3L));
      }
      daemon.destroy(); // SIGTERM
      assertTrue(daemon.waitFor(20, TimeUnit.SECONDS));
      assertEquals(0, daemon.exitValue());
      assertFalse(Files.exists(p), "producer socket removed");
      assertFalse(Files.exists(c), "consumer socket removed");
    } finally {
      daemon.destroyForcibly();
    }
  }

  @Test
  void sigtermLetsEveryOtherShutdownHookFinish() throws Exception {
    // Another hook of the JVM (JFR's dump on exit, an agent's) that takes its time must still end
    // its work: jtraced exits the normal way after a stop signal, it does not halt the JVM.
    Path p = dir.resolve("prod.sock");
    Path c = dir.resolve("cons.sock");
    Path marker = dir.resolve("hook-done");
    Process daemon = new ProcessBuilder(ChildJvm.command(List.of(), System.getProperty("java.class.path"),
        SlowHookJtraced.class.getName(), marker.toString(), "--producer-socket", p.toString(), "--consumer-socket",
        c.toString())).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      assertEquals("jtraced: listening on producer=" + p + " consumer=" + c, readyLine(daemon));
      daemon.destroy(); // SIGTERM
      assertTrue(daemon.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, daemon.exitValue());
      assertTrue(Files.exists(marker), "the slow shutdown hook finished");
      assertFalse(Files.exists(p), "producer socket removed");
    } finally {
      daemon.destroyForcibly();
    }
  }

  /** jtraced with one more shutdown hook, which needs a second to finish (writes args[0] then). */
  public static final class SlowHookJtraced {
    public static void main(String[] args) throws Exception {
      Path marker = Path.of(args[0]);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          Thread.sleep(1000);
          Files.writeString(marker, "done");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }));
      org.jperfetto.cli.Jtraced.main(java.util.Arrays.copyOfRange(args, 1, args.length));
    }
  }

  @Test
  void refusesASecondDaemonOnTheSameSockets() throws Exception {
    Path p = dir.resolve("p.sock");
    Path c = dir.resolve("c.sock");
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p.toString(), c.toString()))) {
      Process second = new ProcessBuilder(java("--producer-socket", p.toString(), "--consumer-socket", c.toString()))
          .redirectErrorStream(true).start();
      String out = new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(second.waitFor(30, TimeUnit.SECONDS));
      assertEquals(1, second.exitValue());
      assertTrue(out.contains("another tracing service is listening on " + p), out);
    }
  }

  @Test
  void backgroundStartsADetachedDaemon() throws Exception {
    Path p = dir.resolve("bp.sock");
    Path c = dir.resolve("bc.sock");
    Path log = dir.resolve("jtraced.log");
    Process launcher = new ProcessBuilder(java("--producer-socket", p.toString(), "--consumer-socket",
        c.toString(), "--background", "--log-file", log.toString()))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String line = readyLine(launcher);
    assertTrue(launcher.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, launcher.exitValue());
    assertTrue(line.startsWith("jtraced: listening on producer=" + p), line);
    long pid = Long.parseLong(line.replaceAll(".*\\(pid (\\d+),.*", "$1"));
    ProcessHandle daemon = ProcessHandle.of(pid).orElseThrow();
    try {
      try (TracingConsumer consumer = TracingConsumer.connect(c.toString())) {
        assertTrue(consumer.getTraceStats().get(10, TimeUnit.SECONDS) != null);
      }
      daemon.destroy();
      daemon.onExit().get(20, TimeUnit.SECONDS);
      assertFalse(Files.exists(c), "consumer socket removed");
    } finally {
      daemon.destroyForcibly();
    }
  }
}
