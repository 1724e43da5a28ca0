package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jperfetto.cli.AttachCommand;
import org.jperfetto.cli.CliContext;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.testing.ChildJvm;
import org.jperfetto.testing.OldJdk;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code jperfetto attach PID} in JFR mode against a plain program on JDK 17 (this machine's
 * default java, which the agent cannot run in): {@code --list} shows it with mode jfr; no
 * recording runs in it until a session enables jvm.jfr; the session gets its GC slices and the
 * stack samples of its hot thread on its own pid and named threads, on CLOCK_MONOTONIC within the
 * System.nanoTime brackets the program printed around its System.gc() calls; the recording is gone
 * when the session ends; {@code --detach} ends the attaching process and leaves no recording; the
 * program's exit status is its own.
 */
@Timeout(120)
class AttachJfrModeIT {
  static final String HOT = "OldJdkTarget.spin";

  @TempDir Path dir;
  final List<Process> processes = new ArrayList<>();
  /** The background attach, started by a process of ours but not our child. */
  ProcessHandle background;

  @AfterEach
  void end() {
    processes.forEach(Process::destroyForcibly);
    if (background != null) {
      background.destroyForcibly();
    }
  }

  /**
   * Streaming is what JDK 16+ targets get; chunks (forced here) is what JDK 11-15 targets get, for
   * want of an older JDK on this machine tested against JDK 17.
   */
  @ParameterizedTest(name = "chunks={0}")
  @ValueSource(booleans = {false, true})
  void jfrModeTracesAJdk17ProgramOnItsOwnProcessAndThreads(boolean chunks) throws Exception {
    Path home = OldJdk.home(17).orElse(null);
    Assumptions.assumeTrue(home != null, () -> OldJdk.missing(17));
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    Map<String, String> env = new HashMap<>(System.getenv());
    env.put("XDG_RUNTIME_DIR", dir.toString()); // where the attach pid file goes
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c))) {
      Process target = start(new ProcessBuilder(OldJdk.targetCommand(home, List.of(), "7")));
      Lines targetOut = new Lines(target);
      targetOut.await("ready on 17", 30);
      long pid = target.pid();

      phase("started");
      Captured list = attach(env, "--list");
      String row = list.out.lines().filter(l -> l.startsWith(pid + " ")).findFirst().orElse("");
      assertTrue(row.contains(" OldJdkTarget ") && row.contains(" 17.") && row.strip().endsWith("jfr"),
          "--list shows the JDK 17 program with mode jfr: " + list.out);

      phase("listed");
      // In the background, as for a long-lived target: the launched copy writes the pid file --detach reads.
      ProcessBuilder attachPb = new ProcessBuilder(ChildJvm.command(
          List.of("-Djperfetto.attach.chunks=" + chunks), System.getProperty("java.class.path"),
          "org.jperfetto.cli.Jperfetto", "attach", Long.toString(pid), "--background", "socket=" + p));
      attachPb.environment().put("XDG_RUNTIME_DIR", dir.toString());
      Process launcher = start(attachPb.redirectErrorStream(true));
      Lines launcherOut = new Lines(launcher);
      assertTrue(launcher.waitFor(30, TimeUnit.SECONDS), "the launching attach returned");
      assertEquals(0, launcher.exitValue(), launcherOut.toString());
      launcherOut.await("in the background (process ", 5);
      Path pidFile = dir.resolve("jperfetto/attach-" + pid + ".pid");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!Files.exists(pidFile) || Files.readString(pidFile).isBlank()) {
        assertTrue(System.nanoTime() < deadline, "the background attach wrote " + pidFile);
        Thread.sleep(100);
      }
      ProcessHandle attacher = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).orElseThrow();
      background = attacher;
      assertTrue(launcherOut.toString().contains("(process " + attacher.pid() + ")"), launcherOut.toString());
      assertFalse(recordings(home, pid), "no recording in the target while no session enables jvm.jfr");

      phase("attached");
      List<TracePacket> packets;
      try (TracingConsumer consumer = TracingConsumer.connect(c)) {
        TraceConfig config = TraceConfig.newBuilder()
            .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
            .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
                .setName(JfrDataSource.NAME).setLegacyConfig("groups=gc,samples,threads")))
            .build();
        TracingSession session = consumer.enableTracing(config);
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!recordings(home, pid)) {
          assertTrue(System.nanoTime() < deadline, "a recording started in the target");
          Thread.sleep(100);
        }
        phase("recording");
        int gcsBefore = targetOut.count("gc ");
        while (targetOut.count("gc ") < gcsBefore + 10) {
          Thread.sleep(100);
        }
        Thread.sleep(1000);
        phase("workload");
        consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
        phase("flushed");
        consumer.disableTracing().get(20, TimeUnit.SECONDS);
        TracingDisabled d = session.disabled().get(20, TimeUnit.SECONDS);
        assertTrue(d.ok(), d.error());
        packets = new ArrayList<>();
        List<TracePacket> out = packets;
        consumer.readBuffers((slices, size) -> out.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
            .get(20, TimeUnit.SECONDS);
      }
      phase("read");
      awaitNoRecording(home, pid, "once the session ended");

      phase("closed");
      writeTrace(packets, chunks ? "-chunks" : "");
      TraceSlices trace = new TraceSlices(packets);
      List<TraceSlices.Slice> gcs = trace.slices.stream()
          .filter(s -> trace.trackName(s.track()).startsWith("GC")).toList();
      assertTrue(gcs.size() >= 5, "GC slices: " + gcs.size() + " of " + trace.slices.size());
      for (TraceSlices.Slice s : gcs) {
        assertEquals(pid, pidOf(trace.tracks, s.track()), "a GC slice on the target's process: " + s);
      }
      // The clock: each GC slice lies inside the System.nanoTime bracket the program printed around
      // the System.gc() call that caused it. The bracket is what the mapping is measured against.
      List<long[]> brackets = targetOut.lines.stream().filter(l -> l.startsWith("gc ")).map(l -> l.split(" "))
          .map(f -> new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])}).toList();
      int inside = 0;
      long worst = 0;
      for (TraceSlices.Slice s : gcs) {
        for (long[] b : brackets) {
          if (s.begin() < b[1] && s.end() > b[0]) { // the call this slice overlaps
            worst = Math.max(worst, Math.max(b[0] - s.begin(), s.end() - b[1]));
            if (s.begin() >= b[0] && s.end() <= b[1]) {
              inside++;
            }
          }
        }
      }
      System.out.println("attach jfr mode" + (chunks ? " (chunks)" : "") + ": " + gcs.size() + " GC slices, " + inside
          + " inside their System.gc() bracket; worst overhang " + worst + " ns");
      assertEquals(gcs.size(), inside, "every GC slice inside a System.gc() call's bracket (worst overhang "
          + worst + " ns)");

      DecodedSamples samples = new DecodedSamples(packets);
      long hotTid = samples.threadNames.entrySet().stream().filter(e -> e.getValue().equals("jfr-hot"))
          .mapToLong(Map.Entry::getKey).findFirst().orElse(-1);
      assertTrue(hotTid > 0, "the hot thread is named: " + samples.threadNames);
      List<DecodedSamples.Sample> hot = samples.on(hotTid);
      assertTrue(hot.size() >= 10, "samples of jfr-hot: " + hot.size() + " of " + samples.samples.size());
      assertTrue(hot.stream().allMatch(s -> s.pid() == pid), "samples on the target's pid");
      long leaf = hot.stream().filter(s -> s.leaf().equals(HOT)).count();
      assertTrue(leaf >= 0.8 * hot.size(), leaf + " of " + hot.size() + " samples have " + HOT + " as leaf");

      phase("decoded");
      Captured detach = attach(env, "--detach", Long.toString(pid));
      assertEquals(0, detach.code, detach.err);
      assertTrue(detach.out.contains("detached from JVM " + pid + " (process " + attacher.pid() + " ended)"),
          detach.out);
      assertFalse(attacher.isAlive(), "the attaching process ended");
      assertFalse(Files.exists(pidFile), "pid file removed");
      assertFalse(recordings(home, pid), "no recording left in the target");
      Captured again = attach(env, "--detach", Long.toString(pid));
      assertEquals(1, again.code);
      assertTrue(again.err.contains("nothing is attached to JVM " + pid), again.err);

      phase("detached");
      target.getOutputStream().close();
      assertTrue(target.waitFor(20, TimeUnit.SECONDS), "the program ended");
      assertEquals(7, target.exitValue(), "the program's own exit status");
    }
  }

  @Test
  void theAgentModeOnAJdk17ProgramSaysWhatItNeedsAndLoadsNothing() throws Exception {
    Path home = OldJdk.home(17).orElse(null);
    Assumptions.assumeTrue(home != null, () -> OldJdk.missing(17));
    Process target = start(new ProcessBuilder(OldJdk.targetCommand(home, List.of(), "7")));
    Lines targetOut = new Lines(target);
    targetOut.await("ready on 17", 30);
    Captured agent = attach(Map.of(), Long.toString(target.pid()), "--mode", "agent", "--agent",
        dir.resolve("none.jar").toString());
    assertEquals(1, agent.code);
    assertTrue(agent.err.contains("no agent jar"), agent.err);
    Path jar = org.jperfetto.agent.AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
    agent = attach(Map.of(), Long.toString(target.pid()), "--agent", jar.toString());
    assertEquals(1, agent.code);
    assertTrue(agent.err.contains("runs JDK 17.") && agent.err.contains("the agent needs JDK 22+")
        && agent.err.contains("--mode jfr` records its JFR events without the agent"), agent.err);
    Captured methods = attach(Map.of(), Long.toString(target.pid()), "--mode", "jfr", "methods=a.B#c");
    assertEquals(1, methods.code);
    assertTrue(methods.err.contains("methods= needs the agent"), methods.err);
    // In the foreground, JFR mode ends with the target and says so.
    ProcessBuilder attachPb = new ProcessBuilder(ChildJvm.command("org.jperfetto.cli.Jperfetto", "attach",
        Long.toString(target.pid()), "socket=" + dir.resolve("nobody.sock")));
    attachPb.environment().put("XDG_RUNTIME_DIR", dir.toString());
    Process attacher = start(attachPb.redirectErrorStream(true));
    Lines attachOut = new Lines(attacher);
    attachOut.await("JFR mode for JVM " + target.pid(), 30);
    assertTrue(Files.exists(dir.resolve("jperfetto/attach-" + target.pid() + ".pid")), "pid file while attached");
    target.getOutputStream().close();
    assertTrue(target.waitFor(20, TimeUnit.SECONDS));
    assertEquals(7, target.exitValue(), "the program's own exit status");
    assertTrue(attacher.waitFor(20, TimeUnit.SECONDS), "attach ended with the target: " + attachOut);
    assertEquals(0, attacher.exitValue(), attachOut.toString());
    assertTrue(attachOut.toString().contains("detached from JVM " + target.pid() + " (it exited)"),
        attachOut.toString());
    assertFalse(Files.exists(dir.resolve("jperfetto/attach-" + target.pid() + ".pid")), "pid file removed");
    assertFalse(String.join("\n", targetOut.lines).contains("Exception"), "nothing in the target's output");
  }

  private long phaseStart = System.nanoTime();

  /** Prints how long the phase that ends now took (the IT's time goes to JVM starts and JFR's pace). */
  private void phase(String ended) {
    long now = System.nanoTime();
    System.out.println("attach jfr mode: " + ended + " after " + (now - phaseStart) / 1_000_000 + " ms");
    phaseStart = now;
  }

  @Test
  void aJvmThatRefusesDynamicAgentsIsListedForJfrModeAndTheAgentIsRefusedWithTheReason() throws Exception {
    Path home = Path.of(System.getProperty("java.home")); // JDK 22+: the agent's mode but for the flag
    Process target = start(new ProcessBuilder(OldJdk.targetCommand(home, List.of("-XX:-EnableDynamicAgentLoading"),
        "7")));
    Lines targetOut = new Lines(target);
    targetOut.await("ready on " + Runtime.version().feature(), 30);
    long pid = target.pid();
    Captured list = attach(Map.of(), "--list");
    String row = list.out.lines().filter(l -> l.startsWith(pid + " ")).findFirst().orElse("");
    assertTrue(row.contains(" OldJdkTarget ") && row.strip().endsWith("jfr"), "mode jfr: " + list.out);
    // Any file passes for the jar: the refusal comes before anything is loaded.
    Captured agent = attach(Map.of(), Long.toString(pid), "--mode", "agent", "--agent",
        OldJdk.TARGET_SOURCE.toString());
    assertEquals(1, agent.code);
    assertTrue(agent.err.contains("JVM " + pid + " refuses dynamic agents (-XX:-EnableDynamicAgentLoading)")
        && agent.err.contains("--mode jfr"), agent.err);
    target.getOutputStream().close();
    assertTrue(target.waitFor(20, TimeUnit.SECONDS));
    assertEquals(7, target.exitValue());
  }

  /** The pid of a track's thread, or of its process (for a process lane or counter). */
  static long pidOf(Map<Long, TrackDescriptor> tracks, long track) {
    TrackDescriptor d = tracks.get(track);
    if (d.hasThread()) {
      return d.getThread().getPid();
    }
    if (d.hasProcess()) {
      return d.getProcess().getPid();
    }
    return d.hasParentUuid() ? pidOf(tracks, d.getParentUuid()) : -1;
  }

  private Process start(ProcessBuilder pb) throws java.io.IOException {
    Process p = pb.start();
    processes.add(p);
    return p;
  }

  /** Keeps the trace as target/AttachJfrModeIT.pftrace, for trace_processor (the packets are a valid trace). */
  static void writeTrace(List<TracePacket> packets, String suffix) throws java.io.IOException {
    org.jperfetto.protos.Trace.Builder t = org.jperfetto.protos.Trace.newBuilder();
    packets.forEach(t::addPacket);
    Files.write(Path.of("target/AttachJfrModeIT" + suffix + ".pftrace"), t.build().toByteArray());
  }

  /** Whether `jcmd PID JFR.check` lists a recording. */
  static boolean recordings(Path home, long pid) throws Exception {
    Process p = new ProcessBuilder(home.resolve("bin/jcmd").toString(), Long.toString(pid), "JFR.check")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertTrue(out.contains("No available recordings") || out.contains("Recording "), out);
    return out.contains("Recording ");
  }

  static void awaitNoRecording(Path home, long pid, String when) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (recordings(home, pid)) {
      assertTrue(System.nanoTime() < deadline, "the recording in the target closed " + when);
      Thread.sleep(200);
    }
  }

  record Captured(int code, String out, String err) {}

  static Captured attach(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext ctx = new CliContext(java.io.InputStream.nullInputStream(), new PrintStream(out, true),
        new PrintStream(err, true), env, false);
    int code = new AttachCommand().run(args, ctx);
    return new Captured(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** A process's output lines, read as they come. */
  static final class Lines {
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final BlockingQueue<String> fresh = new LinkedBlockingQueue<>();

    Lines(Process p) {
      Thread.ofPlatform().daemon().start(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String l = r.readLine(); l != null; l = r.readLine()) {
            lines.add(l);
            fresh.add(l);
          }
        } catch (java.io.IOException e) {
          // ended
        }
      });
    }

    void await(String prefixOrPart, int seconds) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      while (lines.stream().noneMatch(l -> l.contains(prefixOrPart))) {
        String l = fresh.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        assertTrue(l != null || lines.stream().anyMatch(x -> x.contains(prefixOrPart)),
            "\"" + prefixOrPart + "\" within " + seconds + " s; got: " + lines);
      }
    }

    int count(String prefix) {
      return (int) lines.stream().filter(l -> l.startsWith(prefix)).count();
    }

    @Override
    public String toString() {
      return String.join("\n", lines);
    }
  }
}
