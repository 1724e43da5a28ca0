package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.Trace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/** {@code jperfetto demo} as shipped: the command's own main, in a child JVM. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoProcessIT {
  /** What the launchers pass (the unsafe-access flag exists from JDK 23 on). */
  @TempDir Path dir;

  private Process jperfetto(String... args) throws IOException {
    List<String> command = ChildJvm.command(Jperfetto.class.getName(), args);
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
        .redirectError(dir.resolve("stderr.txt").toFile()).redirectOutput(dir.resolve("stdout.txt").toFile());
    pb.environment().put("PERFETTO_CONSUMER_SOCK_NAME", dir.resolve("c.sock").toString());
    pb.environment().put("PERFETTO_PRODUCER_SOCK_NAME", dir.resolve("p.sock").toString());
    return pb.start();
  }

  private String stderr() throws IOException {
    return Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
  }

  @Test
  void demoIsACommandOfTheShippedMainAndWritesTheDefaultFile() throws Exception {
    Process p = jperfetto("demo", "-t", "1s");
    assertTrue(p.waitFor(45, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), stderr());
    Path file = dir.resolve(Demo.DEFAULT_OUT);
    assertTrue(stderr().contains("Demo trace: " + file.toRealPath()), stderr());
    DemoTrace t = DemoTrace.of(Trace.parseFrom(Files.readAllBytes(file)).getPacketList());
    assertEquals(List.of(), t.problems);
    assertFalse(t.named("make_request").isEmpty());
  }

  @Test
  void sigtermStopsTheDemoEarlyAndTheTraceIsStillWritten() throws Exception {
    Path file = dir.resolve("early.perfetto-trace");
    Process p = jperfetto("demo", "-t", "60s", "-o", file.toString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
    while (!stderr().contains("Connected to the tracing service")) {
      assertTrue(p.isAlive() && System.nanoTime() < deadline, stderr());
      Thread.sleep(50);
    }
    Thread.sleep(500); // some events
    p.destroy(); // SIGTERM
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), stderr());
    assertTrue(stderr().contains("SIGTERM received: disabling tracing."), stderr());
    DemoTrace t = DemoTrace.of(Trace.parseFrom(Files.readAllBytes(file)).getPacketList());
    assertFalse(t.named("handle_request").isEmpty(), "events up to the signal");
  }
}
