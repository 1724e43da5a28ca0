package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.agent.AgentTraceFixture.MethodSlices;
import org.jperfetto.cli.DemoTrace;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.testing.ChildJvm;
import org.jperfetto.testing.Recordings;
import org.jperfetto.testing.TraceHealth;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 49's pairing: the agent (method slices, its own TrackEvent on its own producer) and an
 * app's own TrackEvent in one JVM, recorded side by side through jtraced: every session gets both,
 * and the category filters pick each one's slices.
 */
@Timeout(180)
class AgentBesideAppTrackEventIT {
  @TempDir Path dir;

  @Test
  void agentMethodSlicesAndTheAppsOwnSlicesRecordSideBySide() throws Exception {
    sideBySide(System.getProperty("java.class.path"));
  }

  /**
   * The app with jperfetto as a jar of its own on its class path, ahead of the agent jar: the agent
   * finds its own jar further down the class path and still loads in isolation.
   */
  @Test
  void withTheAppsOwnJperfettoJarOnItsClassPath() throws Exception {
    Path core = jarOfClasses(Path.of(org.jperfetto.producer.TracingProducer.class.getProtectionDomain()
        .getCodeSource().getLocation().toURI()), dir.resolve("jperfetto.jar"));
    String classPath = String.join(java.io.File.pathSeparator, core.toString(),
        location(com.google.protobuf.Message.class), location(PairedApp.class));
    sideBySide(classPath);
  }

  private static String location(Class<?> c) throws Exception {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  /** The class directory as a jar. */
  private static Path jarOfClasses(Path classes, Path out) throws Exception {
    try (java.util.jar.JarOutputStream jar = new java.util.jar.JarOutputStream(Files.newOutputStream(out));
        java.util.stream.Stream<Path> files = Files.walk(classes)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        jar.putNextEntry(new java.util.jar.JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        jar.write(Files.readAllBytes(f));
        jar.closeEntry();
      }
    }
    return out;
  }

  private void sideBySide(String classPath) throws Exception {
    Path agentJar = AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    List<String> command = ChildJvm.command(List.of("-Xmx128m", AgentTraceFixture.agentFlag(agentJar,
        "name=agent-side,socket=" + p + ",methods=example.paired.PairedAppWork,jfr=off")),
        classPath, PairedApp.class.getName(), p, "app-side");
    Path stderr = dir.resolve("child.err");
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c))) {
      Process child = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
        assertEquals("READY", out.readLine(), () -> "the app connected: " + read(stderr));
        try (TracingConsumer consumer = TracingConsumer.connect(c)) {
          AgentTraceFixture.awaitProducer(consumer, "agent-side", Set.of("track_event"));
          AgentTraceFixture.awaitProducer(consumer, "app-side", Set.of("track_event"));
        }
        int n = PairedApp.N;
        assertEquals(Map.of("PairedAppWork.step", n, "app_work", n), record(c, out, in, List.of()).counts(),
            () -> read(stderr));
        assertEquals(Map.of("PairedAppWork.step", n), record(c, out, in, List.of("jvm.method")).counts());
        assertEquals(Map.of("app_work", n), record(c, out, in, List.of("app")).counts());
        in.write("EXIT\n");
        in.flush();
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the app exits");
        assertEquals(0, child.exitValue(), read(stderr));
      } finally {
        child.destroyForcibly();
      }
    }
  }

  /** One session on track_event (enabled categories; none: the defaults), one RUN, the slices read back. */
  private static MethodSlices record(String consumerSocket, BufferedReader out, Writer in,
      List<String> categories) throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      return record(consumer, out, in, categories);
    }
  }

  private static MethodSlices record(TracingConsumer consumer, BufferedReader out, Writer in,
      List<String> categories) throws Exception {
    CompletableFuture<Void> started = new CompletableFuture<>();
    consumer.observeEvents(List.of(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), e -> {
      if (e.getAllDataSourcesStarted()) {
        started.complete(null);
      }
    });
    TrackEventConfig.Builder te = TrackEventConfig.newBuilder();
    if (!categories.isEmpty()) {
      te.addDisabledCategories("*").addAllEnabledCategories(categories);
    }
    TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName("track_event").setTrackEventConfig(te)))
        .build());
    started.get(30, TimeUnit.SECONDS);
    in.write("RUN\n");
    in.flush();
    String done = out.readLine();
    assertTrue(done != null && done.startsWith("DONE"), "the app ran: " + done);
    consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(30, TimeUnit.SECONDS);
    List<TracePacket> packets = Recordings.stopAndRead(consumer, session, Duration.ofSeconds(30));
    // Two copies of the library in one process describe each thread and the process alike.
    assertEquals(List.of(), TraceHealth.trackSplits(packets));
    MethodSlices slices = AgentTraceFixture.methodSlices(DemoTrace.of(packets));
    assertEquals(0, slices.unmatchedEnds());
    assertEquals(0, slices.leftOpen());
    return slices;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "(no stderr: " + e.getMessage() + ")";
    }
  }
}
