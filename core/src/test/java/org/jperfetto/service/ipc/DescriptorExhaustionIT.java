package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * jtraced out of file descriptors (issue 14): a child jtraced under {@code ulimit -n} is flooded
 * with connections on its producer socket until accept fails with EMFILE. It must not spin or
 * flood its log meanwhile, must keep serving a consumer connected before, and must accept again
 * once the flood's connections close.
 */
@Timeout(120)
class DescriptorExhaustionIT {
  private static final int FD_LIMIT = 120;
  /** Clock ticks per second of /proc/PID/stat on Linux (USER_HZ). */
  private static final int TICKS_PER_SECOND = 100;

  @TempDir Path dir;

  @Test
  void emfileOnAcceptNeitherSpinsNorFloodsTheLogAndAcceptingResumes() throws Exception {
    Path p = dir.resolve("p.sock");
    Path c = dir.resolve("c.sock");
    Path log = dir.resolve("jtraced.log");
    // From a jar, as deployed: classes loaded from a directory need a descriptor each, and
    // loading one while out of them is a different failure from the one tested here.
    List<String> java = ChildJvm.command(List.of(), jtracedClassPath(), JtracedIT.MAIN,
        "--producer-socket", p.toString(), "--consumer-socket", c.toString());
    String shell = "ulimit -n " + FD_LIMIT + " && exec " + String.join(" ", java);
    Process daemon = new ProcessBuilder("sh", "-c", shell).redirectError(log.toFile()).start();
    List<SocketChannel> flood = new ArrayList<>();
    try {
      assertEquals("jtraced: listening on producer=" + p + " consumer=" + c, JtracedIT.readyLine(daemon));
      try (TracingConsumer early = TracingConsumer.connect(c.toString())) {
        assertNotNull(early.queryCapabilities().get(10, TimeUnit.SECONDS));
        // Non-blocking connects: once jtraced stops accepting, a full backlog would block a
        // blocking connect for good (and a test timeout cannot interrupt a native call).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (openFds(daemon) < FD_LIMIT) {
          connectNonBlocking(p, flood);
          if (System.nanoTime() > deadline) {
            throw new AssertionError("jtraced never ran out of descriptors: " + openFds(daemon));
          }
        }
        for (int i = 0; i < 20; i++) { // queued in the backlog: accept has something to fail on
          connectNonBlocking(p, flood);
        }
        Thread.sleep(300);
        long ticks0 = cpuTicks(daemon);
        long bytes0 = Files.size(log);
        Thread.sleep(2000);
        long ticks = cpuTicks(daemon) - ticks0;
        long bytes = Files.size(log) - bytes0;
        // Before the fix: a core busy (~150 of 200 ticks) and ~30 MB of log lines in 2 s.
        assertTrue(ticks < TICKS_PER_SECOND / 2, "jtraced busy while out of descriptors: " + ticks
            + " ticks in 2 s");
        assertTrue(bytes < 1000, "log lines while out of descriptors: " + bytes + " bytes in 2 s");
        assertNotNull(early.queryCapabilities().get(10, TimeUnit.SECONDS),
            "an open connection is served while accept fails");
      }
      String text = Files.readString(log);
      assertTrue(text.contains("EMFILE"), "the accept failure is logged once: " + text);
      for (SocketChannel s : flood) {
        s.close();
      }
      flood.clear();
      try (TracingConsumer late = TracingConsumer.connect(c.toString())) {
        assertNotNull(late.queryCapabilities().get(10, TimeUnit.SECONDS), "accepting resumed");
      }
    } finally {
      for (SocketChannel s : flood) {
        s.close();
      }
      daemon.destroy();
      if (!daemon.waitFor(20, TimeUnit.SECONDS)) {
        daemon.destroyForcibly();
      }
    }
  }

  /** One more connection if the backlog takes it now; a refused one (EAGAIN) is let go. */
  private static void connectNonBlocking(Path socket, List<SocketChannel> flood) throws Exception {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.configureBlocking(false);
      channel.connect(UnixDomainSocketAddress.of(socket));
      flood.add(channel);
    } catch (IOException backlogFull) {
      channel.close();
      Thread.sleep(5);
    }
  }

  /** jtraced's classes as a jar built from the compiled classes, plus protobuf-java. */
  private String jtracedClassPath() throws IOException {
    String classes = null;
    String protobuf = null;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (entry.endsWith(File.separator + "classes") || entry.endsWith("/classes/")) {
        classes = entry;
      } else if (entry.contains("protobuf-java")) {
        protobuf = entry;
      }
    }
    assertNotNull(classes, "target/classes on the class path");
    assertNotNull(protobuf, "protobuf-java on the class path");
    Path jar = dir.resolve("jtraced.jar");
    ToolProvider tool = ToolProvider.findFirst("jar").orElseThrow();
    int rc = tool.run(new PrintStream(System.out), new PrintStream(System.err), "cf", jar.toString(),
        "-C", classes, ".");
    assertEquals(0, rc, "jar tool");
    return jar + File.pathSeparator + protobuf;
  }

  private static int openFds(Process p) throws IOException {
    try (var s = Files.list(Path.of("/proc", Long.toString(p.pid()), "fd"))) {
      return (int) s.count();
    }
  }

  /** utime + stime of the process, in clock ticks. */
  private static long cpuTicks(Process p) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
