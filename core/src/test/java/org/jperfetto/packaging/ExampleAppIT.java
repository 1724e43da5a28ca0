package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.jperfetto.testing.TraceHealth;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/hello-trace as a user builds and runs it: jperfetto's jar and pom put into a fresh local
 * repository (as `mvn install` would), the example's own pom built by the Maven wrapper offline
 * against it (compile as a named module, copy the dependencies, make protobuf-java modular, jlink
 * an image with the JVM flags baked in), then the app run on the module path, on the class path and
 * from the image, and on the oldest and newest protobuf-java runtimes jperfetto supports. Each run's
 * trace is decoded: every request's slice, instant and counter value is there, and nothing that
 * trace_processor would flag.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ExampleAppIT {
  static final String VERSION = System.getProperty("jperfetto.version");
  static final String MAIN = "org.jperfetto.example.HelloTrace";
  static final String MODULE = "my.app";
  /** HelloTrace.REQUESTS. */
  static final int REQUESTS = 1000;

  @TempDir static Path work;
  static Path app;

  @BeforeAll
  static void buildTheExampleWithItsOwnPom() throws Exception {
    assumeTrue(VERSION != null, "run by surefire, which passes -Djperfetto.version");
    assumeTrue(TestImage.tool("jar").isPresent(), TestImage.missingToolReason("jar"));
    Path repo = work.resolve("repo");
    Path installed = repo.resolve("org/jperfetto/jperfetto/" + VERSION);
    Files.createDirectories(installed);
    // What `mvn install` puts there: the jar of target/classes, the core's pom and the parent pom it
    // inherits its dependency versions from.
    TestImage.run("jar", List.of("--create", "--file", installed.resolve("jperfetto-" + VERSION + ".jar").toString(),
        "-C", TestImage.CLASSES.toString(), "."));
    Files.copy(Path.of("core", "pom.xml"), installed.resolve("jperfetto-" + VERSION + ".pom"));
    Path parent = Files.createDirectories(repo.resolve("org/jperfetto/jperfetto-parent/" + VERSION));
    Files.copy(Path.of("pom.xml"), parent.resolve("jperfetto-parent-" + VERSION + ".pom"));
    app = work.resolve("hello-trace");
    // Its pom and sources only: a target/ left by building it in place is not looked at.
    Path example = Path.of("examples/hello-trace");
    TestImage.copyTree(example.resolve("src"), app.resolve("src"));
    Files.copy(example.resolve("pom.xml"), app.resolve("pom.xml"));

    List<String> mvn = List.of(Path.of("mvnw").toAbsolutePath().toString(), "-B", "-o", "-q",
        "-f", app.resolve("pom.xml").toString(),
        "-Dmaven.repo.local=" + repo,
        // Plugins and protobuf-java come read-only from the build's own local repository.
        "-Dmaven.repo.local.tail=" + System.getProperty("maven.repo.local"),
        "-Djperfetto.version=" + VERSION,
        "package");
    Result build = run(work, mvn, 480);
    assertEquals(0, build.exit(), () -> "example build failed: " + build.output());
    assertTrue(Files.isRegularFile(app.resolve("target/image/bin/hello-trace")), build.output());
  }

  private static List<String> java(String... args) {
    List<String> c = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    if (Runtime.version().feature() >= 23) {
      c.add("--sun-misc-unsafe-memory-access=allow");
    }
    c.addAll(List.of(args));
    return c;
  }

  private static String protobufRuntime(String version) {
    Path jar = Path.of("target/protobuf-runtimes/protobuf-java-" + version + ".jar");
    assertTrue(Files.isRegularFile(jar), jar + ": the build's dependency:copy puts it there");
    return jar.toAbsolutePath().toString();
  }

  private static String jperfettoJar() {
    return app.resolve("target/lib/jperfetto-" + VERSION + ".jar").toString();
  }

  @Test
  void runsOnTheModulePath() throws Exception {
    runAndCheck("module-path", java("--enable-native-access=org.jperfetto",
        "-p", app.resolve("target/hello-trace.jar") + File.pathSeparator + app.resolve("target/lib"),
        "-m", MODULE + "/" + MAIN));
  }

  @Test
  void runsOnTheClassPath() throws Exception {
    runAndCheck("class-path", java("--enable-native-access=ALL-UNNAMED",
        "-cp",
        app.resolve("target/hello-trace.jar") + File.pathSeparator + app.resolve("target/lib") + File.separator + "*",
        MAIN));
  }

  @Test
  void runsFromItsJlinkImageWithTheFlagsBakedIn() throws Exception {
    runAndCheck("image", List.of(app.resolve("target/image/bin/hello-trace").toString()));
  }

  @Test
  void runsOnTheOldestSupportedProtobufRuntime() throws Exception {
    String oldest = System.getProperty("jperfetto.protobuf.oldest");
    runAndCheck("protobuf-" + oldest, java("--enable-native-access=ALL-UNNAMED",
        "-cp", String.join(File.pathSeparator, app.resolve("target/hello-trace.jar").toString(), jperfettoJar(),
            protobufRuntime(oldest)), MAIN));
  }

  @Test
  void runsOnTheOldestSupportedProtobufRuntimeOnTheModulePath() throws Exception {
    String oldest = System.getProperty("jperfetto.protobuf.oldest");
    runAndCheck("protobuf-" + oldest + "-modules", java("--enable-native-access=org.jperfetto",
        "-p", String.join(File.pathSeparator, app.resolve("target/hello-trace.jar").toString(), jperfettoJar(),
            protobufRuntime(oldest)), "-m", MODULE + "/" + MAIN));
  }

  @Test
  void theExamplePinsTheNewestSupportedProtobufSoItsThreeRunsTestIt() throws Exception {
    String newest = System.getProperty("jperfetto.protobuf.newest");
    assertTrue(Files.readString(Path.of("examples/hello-trace/pom.xml")).contains(
        "<protobuf.version>" + newest + "</protobuf.version>"), "examples/hello-trace/pom.xml pins " + newest);
    assertTrue(Files.isRegularFile(app.resolve("target/lib/protobuf-java-" + newest + ".jar")));
    protobufRuntime(newest);
  }

  private static void runAndCheck(String name, List<String> command) throws Exception {
    Path dir = Files.createDirectories(work.resolve("run-" + name));
    Result r = run(dir, command, 120);
    assertEquals(0, r.exit(), () -> name + ": " + r.output());
    assertEquals("wrote app.perfetto-trace: " + REQUESTS + " requests\n", r.output(),
        () -> name + ": a clean run prints its one line and no warning");
    Trace trace = Trace.parseFrom(Files.readAllBytes(dir.resolve("app.perfetto-trace")));
    Map<TrackEvent.Type, Integer> counts = new EnumMap<>(TrackEvent.Type.class);
    for (TracePacket p : trace.getPacketList()) {
      if (p.hasTrackEvent()) {
        counts.merge(p.getTrackEvent().getType(), 1, Integer::sum);
      }
    }
    assertEquals(Map.of(TrackEvent.Type.TYPE_SLICE_BEGIN, REQUESTS, TrackEvent.Type.TYPE_SLICE_END, REQUESTS,
        TrackEvent.Type.TYPE_INSTANT, REQUESTS, TrackEvent.Type.TYPE_COUNTER, REQUESTS), counts, name);
    assertEquals(List.of(), TraceHealth.problems(trace), name);
  }

  private record Result(int exit, String output) {}

  private static Result run(Path dir, List<String> command, long timeoutSeconds)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("MAVEN_") && !k.equals("MAVEN_OPTS"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    Path log = Files.createTempFile(work, "out", ".log");
    pb.redirectOutput(log.toFile());
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new AssertionError(command + " did not end within " + timeoutSeconds + " s: " + Files.readString(log));
    }
    return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }
}
