package org.jperfetto.opentelemetry.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.opentelemetry.PerfettoSpanProcessor;
import org.jperfetto.opentelemetry.TraceEvents;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The test: the real OpenTelemetry Java agent from Maven Central with our extension jar and
 * nothing else, on an app serving HTTP and calling itself; a session of an in-test jtraced records
 * its client and server spans, read back and decoded.
 */
@Timeout(180)
class OtelAgentIT {
  static final String PRODUCER = "otel:otel-it";

  @TempDir
  Path dir;

  /** The app brings its own protobuf-java (4.x), which it loads and uses beside the extension's 3.25. */
  @Test
  void theAgentsClientAndServerSpansAreSlicesLinkedByAFlow() throws Exception {
    traceTheApp(List.of(), List.of(PRODUCER), Path.of(System.getProperty("otel.app.protobuf.jar")));
  }

  /** Our own -javaagent in the same JVM: two producers, each with its own jperfetto and protobuf-java. */
  @Test
  void besideJperfettosOwnAgent() throws Exception {
    Path ours = org.jperfetto.agent.AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
    String p = dir.resolve("p.sock").toString();
    traceTheApp(List.of("-javaagent:" + ours + "=name=jperfetto-agent,socket=" + p + ",jfr=off"),
        List.of(PRODUCER, "jperfetto-agent"), null);
  }

  private void traceTheApp(List<String> moreFlags, List<String> producers, Path appProtobuf) throws Exception {
    Path extension = ExtensionJar.buildFromClassPath(dir.resolve("jperfetto-opentelemetry-extension.jar"));
    Path agent = agentJar();
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c))) {
      Process app = startApp(agent, extension, p, moreFlags, appProtobuf);
      try (BufferedReader out = new BufferedReader(new InputStreamReader(app.getInputStream(), StandardCharsets.UTF_8));
          Writer in = new OutputStreamWriter(app.getOutputStream(), StandardCharsets.UTF_8)) {
        if (appProtobuf != null) {
          String line = readLine(out, app);
          String version = System.getProperty("otel.app.protobuf.version");
          assertTrue(line.startsWith("PROTOBUF ") && (line.contains(version) || line.contains(appProtobuf.toString())),
              "the app runs on its own protobuf-java " + version + ": " + line);
        }
        assertEquals("READY", readLine(out, app));
        byte[] trace = record(c, producers, () -> {
          in.write("RUN\n");
          in.flush();
          assertEquals("DONE", readLine(out, app));
        });
        Files.write(dir.resolve("otel.perfetto-trace"), trace);
        String keep = System.getProperty("otel.it.keep");
        if (keep != null) {
          Files.write(Path.of(keep), trace);
        }
        in.write("EXIT\n");
        in.flush();
        assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the app exits");
        assertEquals(0, app.exitValue(), stderr(app));
        assertTraced(TraceEvents.of(trace));
      } finally {
        app.destroyForcibly();
      }
    }
  }

  /**
   * On a JDK older than 22 the agent runs and the extension says once that it is inactive (the
   * JVM's -version is enough: the agent configures its SDK, and so calls the extension, at start-up).
   * Skipped, saying so, where no such JDK is installed under /usr/lib/jvm (the core's old-JDK tests
   * do the same).
   */
  @Test
  void onAJdkOlderThan22TheExtensionSaysItIsInactive() throws Exception {
    Path oldJava = oldJava();
    Assumptions.assumeTrue(oldJava != null, "no JDK older than 22 under /usr/lib/jvm");
    Path extension = ExtensionJar.buildFromClassPath(dir.resolve("jperfetto-opentelemetry-extension.jar"));
    Process p = new ProcessBuilder(oldJava.toString(), "-XX:TieredStopAtLevel=1", "-javaagent:" + agentJar(),
        "-Dotel.javaagent.extensions=" + extension, "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
        "-Dotel.logs.exporter=none", "-Dotel.instrumentation.common.default-enabled=false", "-version")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    assertEquals(1, out.lines().filter(l -> l.contains("jperfetto OpenTelemetry extension inactive: it needs Java 22"))
        .count(), out);
  }

  /** The java of an installed JDK older than 22, or null. */
  private static Path oldJava() throws Exception {
    try (var homes = Files.list(Path.of("/usr/lib/jvm"))) {
      for (Path h : homes.sorted().toList()) {
        Path release = h.resolve("release");
        if (Files.isExecutable(h.resolve("bin/java")) && Files.isRegularFile(release)) {
          var m = java.util.regex.Pattern.compile("JAVA_VERSION=\"(?:1\\.)?(\\d+)").matcher(Files.readString(release));
          if (m.find() && Integer.parseInt(m.group(1)) < 22) {
            return h.resolve("bin/java");
          }
        }
      }
    } catch (java.io.IOException e) {
      return null;
    }
    return null;
  }

  private static Path agentJar() {
    Path agent = Path.of(System.getProperty("otel.javaagent.jar", "target/otel/opentelemetry-javaagent.jar"));
    assertTrue(Files.isRegularFile(agent), "the build copies the agent to " + agent);
    return agent;
  }

  static void assertTraced(TraceEvents t) {
    List<TraceEvents.Event> begins = t.events.stream()
        .filter(e -> e.type() == org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN).toList();
    List<TraceEvents.Event> clients = begins.stream().filter(e -> "CLIENT".equals(e.args().get("span.kind"))).toList();
    List<TraceEvents.Event> servers = begins.stream().filter(e -> "SERVER".equals(e.args().get("span.kind"))).toList();
    assertEquals(HttpApp.CALLS, clients.size(), "client spans: " + begins);
    assertEquals(HttpApp.CALLS, servers.size(), "server spans: " + begins);
    Map<Object, TraceEvents.Event> clientsById = clients.stream()
        .collect(Collectors.toMap(e -> e.args().get("span_id"), e -> e));
    for (TraceEvents.Event server : servers) {
      TraceEvents.Event client = clientsById.get(server.args().get("parent_span_id"));
      assertTrue(client != null, "the server span's parent is a client span of the trace: " + server);
      assertEquals(client.args().get("trace_id"), server.args().get("trace_id"));
      assertEquals(32, ((String) server.args().get("trace_id")).length());
      long flow = Long.parseUnsignedLong((String) client.args().get("span_id"), 16);
      assertTrue(client.flows().contains(flow), "the client's begin starts the flow of its span id");
      assertTrue(server.flows().contains(flow), "the server's begin continues it");
      assertTrue(client.timestamp() < server.timestamp(), "the call before its handling");
      assertTrue(t.endOf(server) > server.timestamp() && t.endOf(client) > client.timestamp());
      assertEquals(200L, server.args().get("http.response.status_code"));
    }
  }

  private Process startApp(Path agent, Path extension, String producerSocket, List<String> moreFlags,
      Path appProtobuf) throws Exception {
    String classPath = Path.of(HttpApp.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    if (appProtobuf != null) {
      classPath += java.io.File.pathSeparator + appProtobuf;
    }
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED"));
    if (Runtime.version().feature() >= 23) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    // Only the two instrumentations the app needs, and C1 only: the agent's start-up (it rewrites
    // every class it instruments) is most of this test's time on a small machine.
    command.addAll(moreFlags);
    command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-javaagent:" + agent,
        "-Dotel.instrumentation.common.default-enabled=false", "-Dotel.instrumentation.java-http-client.enabled=true",
        "-Dotel.instrumentation.java-http-server.enabled=true", "-Dotel.javaagent.extensions=" + extension,
        "-Dotel.service.name=otel-it", "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
        "-Dotel.logs.exporter=none", "-Dotel.jperfetto.socket=" + producerSocket,
        "-cp", classPath, HttpApp.class.getName()));
    return new ProcessBuilder(command).redirectError(dir.resolve("app.err").toFile()).start();
  }

  private String stderr(Process app) throws Exception {
    return Files.readString(dir.resolve("app.err"));
  }

  private String readLine(BufferedReader out, Process app) throws Exception {
    CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
      try {
        return out.readLine();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    try {
      return line.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("no line from the app: " + stderr(app), e);
    }
  }

  interface Work {
    void run() throws Exception;
  }

  /** Waits for the producers, records work in a track_event session with category otel, returns the trace. */
  static byte[] record(String consumerSocket, List<String> producers, Work work) throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      awaitProducers(consumer, producers);
      CompletableFuture<Void> started = new CompletableFuture<>();
      consumer.observeEvents(List.of(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), e -> {
        if (e.getAllDataSourcesStarted()) {
          started.complete(null);
        }
      });
      TraceConfig config = TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
              .setName("track_event").setTrackEventConfig(TrackEventConfig.newBuilder()
                  .addEnabledCategories(PerfettoSpanProcessor.CATEGORY).addDisabledCategories("*"))))
          .build();
      TracingSession session = consumer.enableTracing(config);
      started.get(30, TimeUnit.SECONDS);
      work.run();
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(30, TimeUnit.SECONDS);
      consumer.disableTracing().get(30, TimeUnit.SECONDS);
      assertTrue(session.disabled().get(30, TimeUnit.SECONDS).ok());
      Trace.Builder trace = Trace.newBuilder();
      consumer.readBuffers((slices, size) -> trace.addPacket(TracePacket.parseFrom(ByteString.copyFrom(slices))))
          .get(30, TimeUnit.SECONDS);
      return trace.build().toByteArray();
    }
  }

  static void awaitProducers(TracingConsumer consumer, List<String> names) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      TracingServiceState s = consumer.queryServiceState(false).get(10, TimeUnit.SECONDS);
      if (names.stream().allMatch(n -> s.getProducersList().stream().anyMatch(p -> p.getName().equals(n)))) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, "the producers " + names + " connected: " + s);
      Thread.sleep(100);
    }
  }
}
