package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The agent tests' child application (src/test/agent-app): compiled here against, and run with,
 * the older protobuf-java the build copied into target/agent-test-libs, on the class path or as
 * module {@code example.app}; it never sees jperfetto. Talks over its standard streams.
 */
final class AgentTestApp implements AutoCloseable {
  static final Path SOURCES = Path.of("core/src/test/agent-app");
  static final String MAIN = "example.app.AgentTargetApp";

  /** How the app is launched. */
  enum Launch { CLASS_PATH, MODULE_PATH }

  final Process process;
  final long pid;
  final Map<String, String> header = new HashMap<>();
  final Path stderr;
  private final BufferedReader out;
  private final Writer in;

  private AgentTestApp(Process process, Path stderr) throws IOException {
    this.process = process;
    this.stderr = stderr;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    for (String line = out.readLine(); !"READY".equals(line); line = out.readLine()) {
      assertTrue(line != null, "the app ended before READY: " + stderrText());
      int sp = line.indexOf(' ');
      if (sp > 0) {
        header.put(line.substring(0, sp), line.substring(sp + 1));
      }
    }
    this.pid = Long.parseLong(header.get("PID"));
  }

  /** The older protobuf-java jar (3.x) the app bundles. */
  static Path oldProtobuf() throws IOException {
    Path dir = Path.of("target/agent-test-libs");
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("protobuf-java-3\\..*\\.jar")).findFirst()
          .orElseThrow(() -> new IOException("no protobuf-java 3.x in " + dir + " (the build copies it there)"));
    }
  }

  /** Compiles the app into dir/app (with its module-info when modular). */
  static Path compile(Path dir, Launch launch) throws IOException {
    Path classes = dir.resolve("app-" + launch.name().toLowerCase());
    List<String> args = new ArrayList<>(List.of("--release", "21", "-d", classes.toString(),
        launch == Launch.MODULE_PATH ? "--module-path" : "-cp", oldProtobuf().toString()));
    try (Stream<Path> s = Files.walk(SOURCES)) {
      s.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> launch == Launch.MODULE_PATH || !p.getFileName().toString().equals("module-info.java"))
          .forEach(p -> args.add(p.toString()));
    }
    java.util.spi.ToolProvider javac = java.util.spi.ToolProvider.findFirst("javac").orElseThrow();
    assertEquals(0, javac.run(System.out, System.err, args.toArray(String[]::new)), "compiling the agent test app");
    return classes;
  }

  /** Starts the compiled app with extra JVM flags (e.g. the -javaagent) and waits for READY. */
  static AgentTestApp start(Path dir, Launch launch, List<String> jvmFlags) throws IOException {
    Path classes = compile(dir, launch);
    String path = classes + java.io.File.pathSeparator + oldProtobuf();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    if (launch == Launch.MODULE_PATH) {
      command.addAll(List.of("--module-path", path, "-m", "example.app/" + MAIN));
    } else {
      command.addAll(List.of("-cp", path, MAIN));
    }
    Path err = dir.resolve("app-" + launch.name().toLowerCase() + ".err");
    Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
    return new AgentTestApp(p, err);
  }

  /** One workload; returns its checksum. */
  long run() throws IOException {
    in.write("RUN\n");
    in.flush();
    String line = out.readLine();
    assertTrue(line != null && line.startsWith("DONE "), "the app's answer to RUN: " + line + "; " + stderrText());
    return Long.parseLong(line.substring(5));
  }

  String stderrText() {
    try {
      return Files.readString(stderr);
    } catch (IOException e) {
      return "(no stderr: " + e + ")";
    }
  }

  /** Asks the app to exit; returns its exit code. */
  int exit() throws Exception {
    in.write("EXIT\n");
    in.flush();
    assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the app exits");
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
