package org.jperfetto.service.ipc;

import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.SEC;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.ring;
import static org.jperfetto.service.ipc.SessionIT.uid;
import static org.jperfetto.service.ipc.SessionIT.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ServiceLimits;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/**
 * The features that depend on the peer's uid, over the real sockets with clients that really are
 * other uids: child JVMs ({@link OtherUidClient}) started through setpriv. Needs root and
 * /usr/bin/setpriv (skipped otherwise; CI runs as root).
 */
@Timeout(60)
class OtherUidsIT extends SocketFixture {
  static final Path SETPRIV = Path.of("/usr/bin/setpriv");
  static final TraceConfig.LockdownModeOperation SET = TraceConfig.LockdownModeOperation.LOCKDOWN_SET;
  static final TraceConfig.LockdownModeOperation CLEAR = TraceConfig.LockdownModeOperation.LOCKDOWN_CLEAR;

  /** World-readable copies of the class path the child needs (the originals may be under /root). */
  @TempDir static Path classes;
  static String childClassPath;

  @BeforeAll
  static void copyClassPath() throws Exception {
    assumeTrue(uid() == 0 && Files.isExecutable(SETPRIV),
        "needs root and " + SETPRIV + " to run clients as other uids");
    List<String> entries = new ArrayList<>();
    for (Class<?> c : List.of(OtherUidClient.class, ServiceHost.class, com.google.protobuf.MessageLite.class)) {
      Path from = location(c);
      Path to = classes.resolve(entries.size() + "-" + from.getFileName());
      copyTree(from, to);
      entries.add(to.toString());
    }
    openUp(classes);
    childClassPath = String.join(":", entries);
  }

  static Path location(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Files.copy(p, to.resolve(from.relativize(p).toString()));
      }
    }
  }

  /** chmod a+rX on the whole tree. */
  static void openUp(Path root) throws IOException {
    try (Stream<Path> all = Files.walk(root)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(
            Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
  }

  @BeforeEach
  @Override
  void start() throws Exception {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    producerSocket = dir.resolve("p.sock").toString();
    consumerSocket = dir.resolve("c.sock").toString();
    host = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket)
        .withConsumerSocketMode(0666));
  }

  /** A child JVM running OtherUidClient as uid (gid = uid, no supplementary groups). */
  final class Child implements AutoCloseable {
    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    Child(int uid, String... args) throws IOException {
      List<String> cmd = new ArrayList<>(List.of(SETPRIV.toString(), "--reuid=" + uid, "--regid=" + uid,
          "--clear-groups"));
      cmd.addAll(ChildJvm.command(List.of("-XX:-UsePerfData", "-XX:TieredStopAtLevel=1", "-Xmx64m"), childClassPath,
          OtherUidClient.class.getName(), args));
      process = new ProcessBuilder(cmd).directory(classes.toFile())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      toClose.add(this);
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8));
      Thread.ofPlatform().daemon().start(() -> {
        try {
          for (String line; (line = out.readLine()) != null; ) {
            lines.add(line);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        lines.add("exited");
      });
    }

    /** The next line the child printed; fails after 20 s (a cold JVM on a busy machine). */
    String next() throws InterruptedException {
      String line = lines.poll(20, TimeUnit.SECONDS);
      if (line == null) {
        throw new AssertionError("child " + process.pid() + " said nothing within 20 s");
      }
      return line;
    }

    /** Skips lines until the child prints expected; fails after 20 s. */
    void await(String expected) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      List<String> skipped = new ArrayList<>();
      while (true) {
        String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null || line.equals("exited")) {
          throw new AssertionError("child " + process.pid() + ": no \"" + expected + "\", only " + skipped);
        }
        if (line.equals(expected)) {
          return;
        }
        skipped.add(line);
      }
    }

    /** Fails if the child prints a line starting with prefix within ms. */
    void expectNo(String prefix, long ms) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
      long left;
      while ((left = deadline - System.nanoTime()) > 0) {
        String line = lines.poll(left, TimeUnit.NANOSECONDS);
        assertFalse(line != null && line.startsWith(prefix), "unexpected from the child: " + line);
      }
    }

    /** Closes its stdin: the child closes its connections and exits. */
    @Override
    public void close() throws IOException {
      process.getOutputStream().close();
      boolean exited;
      try {
        exited = process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        exited = false;
      }
      if (!exited) {
        process.destroyForcibly();
      }
    }
  }

  Child producerAs(int uid, String name) throws IOException {
    return new Child(uid, "producer", producerSocket, name, DS);
  }

  static int producerCount(TracingConsumer c) {
    return c.queryServiceState(false).join().getProducersCount();
  }

  @Test
  void lockdownRefusesProducersOfOtherUidsButNotTheServicesOwn() throws Exception {
    // A producer of another uid connected before the lockdown session is not set up by it.
    Child early = producerAs(1001, "early");
    assertEquals("connected", early.next());
    TracingConsumer probe = consumer();
    waitFor(() -> producerCount(probe) == 1);

    TracingConsumer locked = consumer();
    TracingSession session = locked.enableTracing(ring(4).toBuilder().setLockdownMode(SET).build());
    SocketProducer own = producer("own");
    own.await(CmdCase.SETUP_DATA_SOURCE);
    own.await(CmdCase.START_DATA_SOURCE);

    Child stranger = producerAs(1000, "stranger");
    String refused = stranger.next();
    assertTrue(refused.startsWith("refused"), "another uid under lockdown: " + refused);
    early.expectNo("command", 300);
    assertEquals(2, producerCount(probe), "own and early stay; stranger is gone");
    assertFalse(session.disabled().isDone(), "the session itself keeps running");

    // Clearing the lockdown lets other uids in again.
    locked.disableTracing().get(SEC, TimeUnit.SECONDS);
    locked.freeBuffers().get(SEC, TimeUnit.SECONDS);
    consumer().enableTracing(ring(4).toBuilder().setLockdownMode(CLEAR).build());
    early.await("command SETUP_DATA_SOURCE"); // once lockdown is clear
    Child later = producerAs(1000, "later");
    assertEquals("connected", later.next());
    later.await("command SETUP_DATA_SOURCE");
  }

  @Test
  void fifteenSessionsInTotalThenRefusedEvenForAUidWithNone() throws Exception {
    int perUid = ServiceLimits.MAX_SESSIONS_PER_UID;
    List<Child> holders = new ArrayList<>();
    for (int uid = 1000; holders.size() * perUid < ServiceLimits.MAX_SESSIONS; uid++) {
      holders.add(new Child(uid, "consumers", consumerSocket, Integer.toString(perUid)));
    }
    for (Child h : holders) {
      assertEquals("enabled " + perUid, h.next());
    }
    TracingConsumer probe = consumer();
    waitFor(() -> probe.queryServiceState(true).join().getNumSessions() == ServiceLimits.MAX_SESSIONS);
    assertEquals(3, probe.queryServiceState(true).get(SEC, TimeUnit.SECONDS).getTracingSessionsList()
        .stream().mapToInt(s -> s.getConsumerUid()).distinct().count(), "three other uids hold them");

    // Root has no session at all, far below its 5, and is still refused: the service is full.
    TracingDisabled refused = consumer().enableTracing(ring(4)).disabled().get(SEC, TimeUnit.SECONDS);
    assertFalse(refused.ok());
    assertTrue(refused.error().contains("Too many concurrent tracing sessions (15)"), refused.error());
    assertFalse(refused.error().contains("for uid"), "the overall limit, not the per-uid one: "
        + refused.error());

    // One holder leaves: its five sessions end and root gets a slot.
    holders.get(0).close();
    waitFor(() -> probe.queryServiceState(true).join().getNumSessions() == ServiceLimits.MAX_SESSIONS - perUid);
    TracingSession again = consumer().enableTracing(ring(4));
    waitFor(() -> probe.queryServiceState(true).join().getNumSessions() == ServiceLimits.MAX_SESSIONS - perUid + 1);
    assertFalse(again.disabled().isDone(), "a freed slot is usable");
  }
}
