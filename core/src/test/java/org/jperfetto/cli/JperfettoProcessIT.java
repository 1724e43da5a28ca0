package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FakeTraced;
import org.jperfetto.protos.Trace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/** jperfetto as its own process: SIGTERM mid-session and --background. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JperfettoProcessIT {
  @TempDir Path dir;
  FakeTraced fake;
  String socket;

  @BeforeEach
  void start() throws IOException {
    fake = FakeTraced.startIn(dir);
    socket = fake.address();
  }

  @AfterEach
  void stop() {
    fake.close();
  }

  private Process jperfetto(String... args) throws IOException {
    List<String> command = ChildJvm.command(List.of("-Xshare:auto"), System.getProperty("java.class.path"),
        Jperfetto.class.getName(), args);
    ProcessBuilder pb = new ProcessBuilder(command).redirectError(dir.resolve("stderr.txt").toFile());
    pb.environment().put("PERFETTO_CONSUMER_SOCK_NAME", socket);
    return pb.start();
  }

  private void awaitCall(String method) throws InterruptedException {
    while (!fake.methodsCalled().contains(method)) {
      Thread.sleep(20);
    }
  }

  @Test
  void sigtermMidSessionStopsCleanlyAndWritesAValidTrace() throws Exception {
    Path file = dir.resolve("sigterm.pftrace");
    Process p = jperfetto("-t", "60s", "-o", file.toString());
    awaitCall("EnableTracing");
    p.destroy(); // SIGTERM
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    String stderr = Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), stderr);
    assertTrue(stderr.contains("SIGTERM received: disabling tracing."), stderr);
    // The start's data source check (QueryServiceState) may come before the signal or not.
    assertEquals(List.of("EnableTracing", "Flush", "DisableTracing", "ReadBuffers"),
        fake.methodsCalled().stream().filter(m -> !m.equals("QueryServiceState")).toList());
    assertEquals(10, Trace.parseFrom(Files.readAllBytes(file)).getPacketCount());
  }

  @Test
  void backgroundReturnsAtOnceAndTheTraceAppears() throws Exception {
    Path file = dir.resolve("bg.pftrace");
    Process p = jperfetto("--background", "-t", "1s", "-o", file.toString());
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
    String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("stderr.txt")));
    long pid = Long.parseLong(printed);
    assertTrue(Files.exists(file), "the output file exists when --background returns");
    ProcessHandle child = ProcessHandle.of(pid).orElse(null);
    if (child != null) {
      child.onExit().get(30, TimeUnit.SECONDS);
    }
    assertEquals(10, Trace.parseFrom(Files.readAllBytes(file)).getPacketCount());
    assertTrue(fake.methodsCalled().contains("ReadBuffers"));
  }
}
