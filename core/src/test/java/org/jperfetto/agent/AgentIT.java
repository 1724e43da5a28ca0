package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jperfetto.agent.AgentTestApp.Launch;
import org.jperfetto.agent.AgentTraceFixture.MethodSlices;
import org.jperfetto.cli.CliContext;
import org.jperfetto.cli.DemoTrace;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The issue's tests: an application that never references jperfetto (and bundles protobuf-java
 * 3.x) traced through an in-test jtraced, with the agent given at start-up (class path and module
 * path) or attached to it while it runs; its JFR events and configured method slices, on platform
 * and virtual threads, are read back, decoded and counted.
 */
@Timeout(180)
class AgentIT {
  /** Per RUN of the app (example.app.Workload): calls on the main thread and on 4 virtual threads. */
  static final Map<String, Integer> EXPECTED = Map.of("Work.compute", 50 + 4 * 50, "Work.leaf", 50 + 4 * 50,
      "Work.recovers", 50, "Work.fail", 50);
  static final String METHODS = "methods=example.app.Work";

  @TempDir Path dir;
  Path agentJar;

  @BeforeEach
  void buildAgentJar() throws Exception {
    agentJar = AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
  }

  static List<String> jvmFlags(String... more) {
    List<String> flags = new ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED", "-Xmx128m"));
    if (Runtime.version().feature() >= 23) {
      flags.add("--sun-misc-unsafe-memory-access=allow");
    }
    flags.addAll(List.of(more));
    return flags;
  }

  @Test
  void agentOnTheCommandLineTracesAClassPathApp() throws Exception {
    traceWithAgentAtStart(Launch.CLASS_PATH);
  }

  @Test
  void agentOnTheCommandLineTracesAModulePathApp() throws Exception {
    traceWithAgentAtStart(Launch.MODULE_PATH);
  }

  private void traceWithAgentAtStart(Launch launch) throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    String name = "agent-it-" + launch;
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c));
        AgentTestApp app = AgentTestApp.start(dir, launch, jvmFlags(AgentTraceFixture.agentFlag(agentJar,
            "name=" + name + ",socket=" + p + "," + METHODS + ",jfr=gc+threads")))) {
      assertEquals(launch == Launch.MODULE_PATH ? "example.app" : "null", app.header.get("MODULE"));
      DemoTrace trace = DemoTrace.of(AgentTraceFixture.record(c, name, app));
      assertEquals(0, app.exit(), app.stderrText());
      assertTraced(trace, app);
    }
  }

  @Test
  void attachLoadsTheAgentIntoARunningApp() throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c));
        AgentTestApp app = AgentTestApp.start(dir, Launch.CLASS_PATH, jvmFlags("-XX:+EnableDynamicAgentLoading"))) {
      Captured list = attach("--list");
      assertEquals(0, list.code, list.err);
      assertTrue(list.out.lines().anyMatch(l -> l.matches(app.pid + " +" + java.util.regex.Pattern.quote(
          AgentTestApp.MAIN) + " +" + Runtime.version().feature() + "\\S* +agent")),
          "attach --list shows the app, its JDK and mode agent: " + list.out);

      Captured attached = attach(Long.toString(app.pid), "--agent", agentJar.toString(),
          "name=attached,socket=" + p + "," + METHODS);
      assertEquals(0, attached.code, attached.err + app.stderrText());
      assertTrue(attached.out.contains("loaded into JVM " + app.pid), attached.out);

      DemoTrace trace = DemoTrace.of(AgentTraceFixture.record(c, "attached", app));
      assertEquals(0, app.exit(), app.stderrText());
      assertTraced(trace, app);
      assertFalse(app.stderrText().contains("WARNING: A Java agent has been loaded dynamically"),
          "-XX:+EnableDynamicAgentLoading silences the JDK's warning: " + app.stderrText());
    }
  }

  @Test
  void aSessionsConfigNamesTheMethodsAndTheyAreRestoredAfterIt() throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    DataSourceConfig trackEvent = DataSourceConfig.newBuilder().setName("track_event").build();
    DataSourceConfig methods = DataSourceConfig.newBuilder().setName(MethodsDataSource.NAME)
        .setLegacyConfig("example.app.Work#compute\nexample.app.Work#leaf").build();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c));
        AgentTestApp app = AgentTestApp.start(dir, Launch.CLASS_PATH, jvmFlags(AgentTraceFixture.agentFlag(agentJar,
            "name=configured,socket=" + p + ",jfr=off")))) {
      MethodSlices first = AgentTraceFixture.methodSlices(DemoTrace.of(
          AgentTraceFixture.record(c, "configured", app, List.of(trackEvent, methods), 0)));
      assertEquals(Map.of("Work.compute", EXPECTED.get("Work.compute"), "Work.leaf", EXPECTED.get("Work.leaf")),
          first.counts(), "the session's patterns, rewritten before the service heard the start");
      MethodSlices after = AgentTraceFixture.methodSlices(DemoTrace.of(
          AgentTraceFixture.record(c, "configured", app, List.of(trackEvent), 0)));
      assertEquals(Map.of(), after.counts(), "Work has its own bytecode back once the session ended");
      assertEquals(0, app.exit(), app.stderrText());
      assertFalse(app.stderrText().contains("Exception"), app.stderrText());
    }
  }

  @Test
  void attachWithoutAnAgentJarOrToNoJvmSaysWhy() throws Exception {
    Captured noPid = attach("name=x");
    assertEquals(1, noPid.code);
    assertTrue(noPid.err.contains("jperfetto attach: no PID") && noPid.err.contains("usage:"), noPid.err);
    Captured noJar = attach("1", "--agent", dir.resolve("missing.jar").toString());
    assertEquals(1, noJar.code);
    assertTrue(noJar.err.contains("no agent jar at") && noJar.err.contains("--agent"), noJar.err);
    Captured noVm = attach(Long.toString(Integer.MAX_VALUE), "--agent", agentJar.toString());
    assertEquals(1, noVm.code);
    assertTrue(noVm.err.contains("cannot attach to JVM " + Integer.MAX_VALUE), noVm.err);
  }

  private static void assertTraced(DemoTrace trace, AgentTestApp app) {
    assertTrue(app.header.get("PROTOBUF").contains("protobuf-java-3."), "the app ran on its own protobuf: "
        + app.header);
    String err = app.stderrText();
    assertFalse(err.contains("jperfetto agent: not started") || err.contains("Exception"), err);
    assertFalse(err.contains("restricted method"), "no native-access warning with the flag: " + err);

    MethodSlices m = AgentTraceFixture.methodSlices(trace);
    assertEquals(EXPECTED, m.counts(), "method slices per name");
    assertEquals(0, m.unmatchedEnds());
    assertEquals(0, m.leftOpen());
    assertEquals(java.util.Set.of("main"), m.tracks().get("Work.fail"), "on the main thread's track");
    long virtualTracks = m.tracks().get("Work.compute").stream().filter(t -> t.startsWith("VirtualThread#")).count();
    assertEquals(4, virtualTracks, "one track per virtual thread: " + m.tracks().get("Work.compute"));
    assertTrue(AgentTraceFixture.gcSlices(trace) >= 1, "jvm.jfr's GC slices");
  }

  private record Captured(int code, String out, String err) {}

  private static Captured attach(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
        System.getenv(), false);
    int code = new org.jperfetto.cli.AttachCommand().run(args, ctx);
    return new Captured(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
