package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jlink runtime image and its launchers, built from the compiled classes with the build's own
 * jlink options, descriptor and launcher template (see {@link TestImage}), then run for real.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PackagingIT {

  @TempDir static Path work;
  private static Path image;

  @BeforeAll
  static void buildImage() throws Exception {
    for (String tool : List.of("jlink", "javac", "jar")) {
      assumeTrue(TestImage.tool(tool).isPresent(), TestImage.missingToolReason(tool));
    }
    List<String> launchers = new ArrayList<>(List.of("demo=" + TestImage.DEMO_MAIN));
    for (String main : List.of("Jperfetto", "Jtraced")) { // both exist: a missing one fails the build
      launchers.add(main.toLowerCase() + "=org.jperfetto/org.jperfetto.cli." + main);
    }
    image = TestImage.build(work, launchers);
  }

  @Test
  void jlinkArgsCarryTheImageOptions() throws Exception {
    List<String> args = TestImage.jlinkArgs();
    for (String option : List.of("--strip-debug", "--no-header-files", "--no-man-pages")) {
      assertTrue(args.contains(option), () -> option + " missing from " + TestImage.JLINK_ARGS + ": " + args);
    }
    assertEquals("org.jperfetto", args.get(args.indexOf("--add-modules") + 1), args::toString);
    assertTrue(args.stream().anyMatch(a -> a.matches("--compress=zip-[0-9]")),
        () -> "JDK 21+ --compress syntax: " + args);
  }

  @Test
  void protobufDescriptorIsNamedAndExportsEveryPackageOfTheJar() throws Exception {
    ModuleDescriptor d = ModuleFinder.of(work.resolve("modules/protobuf-java.jar")).findAll().iterator().next()
        .descriptor();
    assertEquals("com.google.protobuf", d.name());
    assertFalse(d.isAutomatic(), "jlink needs a real descriptor, not the Automatic-Module-Name");
    Set<String> classPackages = new TreeSet<>();
    try (JarFile jar = new JarFile(TestImage.protobufJar().toFile())) {
      jar.stream().map(ZipEntry::getName)
          .filter(n -> n.endsWith(".class") && !n.startsWith("META-INF/") && n.contains("/"))
          .forEach(n -> classPackages.add(n.substring(0, n.lastIndexOf('/')).replace('/', '.')));
    }
    Set<String> exported = d.exports().stream().map(ModuleDescriptor.Exports::source)
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(classPackages, exported,
        "a protobuf-java upgrade added or dropped a package: update " + TestImage.PROTOBUF_MODULE_INFO);
  }

  @Test
  void imageHoldsOurModuleProtobufAndOnlyTheJdkModulesTheyNeed() throws Exception {
    Result r = run(Map.of(), image.resolve("bin/java").toString(), "--list-modules");
    assertEquals(0, r.exit(), r::toString);
    Set<String> names = r.stdout().lines().map(l -> l.replaceFirst("@.*", ""))
        .collect(Collectors.toCollection(TreeSet::new));
    // jdk.attach (and its jdk.internal.jvmstat): `jperfetto attach`; jdk.management.jfr and the JMX
    // RMI connector (java.management.rmi, java.rmi, java.naming, java.security.sasl, jdk.management):
    // attach's JFR mode; jdk.httpserver: `jperfetto open`; java.instrument and ASM are the agent's,
    // outside the image.
    assertEquals(new TreeSet<>(Set.of("com.google.protobuf", "java.base", "java.logging", "java.management",
        "java.management.rmi", "java.naming", "java.rmi", "java.security.sasl", "jdk.attach", "jdk.httpserver",
        "jdk.internal.jvmstat", "jdk.jfr", "jdk.management", "jdk.management.jfr", "jdk.unsupported",
        "org.jperfetto")), names, r::toString);
    assertFalse(Files.exists(image.resolve("include")), "--no-header-files: include/ must be absent");
    assertFalse(Files.exists(image.resolve("man")), "--no-man-pages: man/ must be absent");
    assertTrue(Files.isExecutable(image.resolve("bin/demo")), "launcher installed executable");
  }

  @Test
  void launcherGrantsNativeAccessAndProtobufWorksAsANamedModuleWithoutWarnings() throws Exception {
    Result r = run(Map.of(), image.resolve("bin/demo").toString());
    assertEquals(0, r.exit(), r::toString);
    List<String> lines = r.stdout().lines().toList();
    assertEquals("module org.jperfetto", lines.get(0), r::toString);
    assertEquals("native-access true", lines.get(1), r::toString);
    assertTrue(lines.get(2).startsWith("protobuf-module module { name: com.google.protobuf"), r::toString);
    assertTrue(lines.contains("trace-config buffers=1 size_kb=1024 duration_ms=2500"), r::toString);
    // Without --enable-native-access / --sun-misc-unsafe-memory-access the JDK prints WARNING lines here.
    assertEquals("", r.stderr(), "the launcher must pass every flag the JDK would otherwise warn about");
  }

  @Test
  void attachListRunsFromTheImage() throws Exception {
    Result r = run(Map.of(), image.resolve("bin/java").toString(), "-m", "org.jperfetto/org.jperfetto.cli.Jperfetto",
        "attach", "--list");
    assertEquals(0, r.exit(), r::toString);
    assertTrue(r.stdout().lines().anyMatch(l -> l.startsWith(ProcessHandle.current().pid() + " ")),
        () -> "this test JVM is attachable and listed: " + r);
  }

  @Test
  void launcherWorksThroughASymlinkAndPassesJperfettoJavaOpts() throws Exception {
    Path link = Files.createSymbolicLink(Files.createDirectories(work.resolve("path-bin")).resolve("demo"),
        image.resolve("bin/demo").toAbsolutePath());
    Result r = run(Map.of("JPERFETTO_JAVA_OPTS", "-Djperfetto.demo.tag=from-env"), link.toString());
    assertEquals(0, r.exit(), r::toString);
    assertTrue(r.stdout().lines().anyMatch("tag from-env"::equals), r::toString);
    assertTrue(r.stdout().lines().anyMatch("native-access true"::equals), r::toString);
  }

  @Test
  void launcherPassesProgramArgumentsThroughUntouched() throws Exception {
    Result r = run(Map.of(), image.resolve("bin/demo").toString(), "--bogus", "two words");
    assertEquals(2, r.exit(), r::toString);
    assertTrue(r.stderr().contains("usage: ImageDemo"), r::toString);
  }

  @Test
  void listeningMainBindsItsSocketThroughFfmInsideTheImage() throws Exception {
    Path socket = work.resolve("demo.sock");
    long start = System.nanoTime();
    Process p = new ProcessBuilder(image.resolve("bin/demo").toString(), "--listen", socket.toString()).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      String ready = null;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("ready ")) {
          ready = line;
          break;
        }
      }
      long millis = (System.nanoTime() - start) / 1_000_000;
      assertEquals("ready " + socket, ready, () -> "no ready line; stderr: " + stderrOf(p));
      assertTrue(Files.exists(socket), "socket file after the ready line");
      System.getLogger(PackagingIT.class.getName()).log(System.Logger.Level.INFO,
          "test image: exec to socket-ready {0} ms", millis);
      p.getOutputStream().close();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "demo exits when stdin closes");
      assertEquals(0, p.exitValue(), () -> stderrOf(p));
      assertFalse(Files.exists(socket), "socket removed on exit");
    } finally {
      p.destroyForcibly();
    }
  }

  /** The build's training run on the demo, then the launcher must map the archive it left. */
  @Test
  @Tag("stress")
  void trainedArchiveIsPickedUpByTheLauncher() throws Exception {
    assumeTrue(Runtime.version().feature() >= 25,
        "AOT caches need a 25+ runtime; on " + Runtime.version()
            + " train-cds.sh makes a dynamic AppCDS archive instead, not checked here");
    Result train = run(Map.of(), "sh", "scripts/train-cds.sh", image.toString(), "demo --listen");
    assertEquals(0, train.exit(), train::toString);
    assertTrue(Files.isRegularFile(image.resolve("lib/demo.aot")), train::toString);
    // AOTMode=on makes the JVM refuse to start unless the launcher's cache is actually usable.
    Result r = run(Map.of("JPERFETTO_JAVA_OPTS", "-XX:AOTMode=on"), image.resolve("bin/demo").toString());
    assertEquals(0, r.exit(), r::toString);
    assertTrue(r.stdout().lines().anyMatch("native-access true"::equals), r::toString);
    assertEquals("", r.stderr(), r::toString);
    Result without = run(Map.of("JPERFETTO_NO_ARCHIVE", "1", "JPERFETTO_JAVA_OPTS", "-XX:AOTMode=on"),
        image.resolve("bin/demo").toString());
    assertTrue(without.exit() != 0, () -> "JPERFETTO_NO_ARCHIVE must drop -XX:AOTCache: " + without);
  }

  @Test
  void jperfettoLauncherRunsTheCli() throws Exception {
    Result version = run(Map.of(), image.resolve("bin/jperfetto").toString(), "--version");
    assertEquals(0, version.exit(), version::toString);
    assertTrue(version.stdout().startsWith("jperfetto "), version::toString);
    assertEquals("", version.stderr(), "no JDK warnings through the launcher");
    Result help = run(Map.of(), image.resolve("bin/jperfetto").toString(), "--help");
    assertTrue(help.stderr().toLowerCase().contains("usage"), help::toString);
    assertFalse(help.stderr().contains("WARNING"), help::toString);
  }

  @Test
  void onlyTheJtracedLauncherRunsADaemonsSmallSerialHeap() throws Exception {
    Map<String, String> flags = Map.of("JPERFETTO_JAVA_OPTS", "-XX:+PrintCommandLineFlags");
    Result jtraced = run(flags, image.resolve("bin/jtraced").toString(), "--help");
    assertEquals(0, jtraced.exit(), jtraced::toString);
    for (String flag : List.of("-XX:+UseSerialGC", "-XX:MaxHeapFreeRatio=20", "-XX:-ShrinkHeapInSteps",
        "-XX:TrimNativeHeapInterval=5000")) {
      assertTrue(jtraced.stdout().contains(flag), () -> flag + " in " + jtraced);
    }
    Result jperfetto = run(flags, image.resolve("bin/jperfetto").toString(), "--version");
    assertEquals(0, jperfetto.exit(), jperfetto::toString);
    assertFalse(jperfetto.stdout().contains("-XX:+UseSerialGC"), jperfetto::toString);
    Result g1 = run(Map.of("JPERFETTO_JAVA_OPTS", "-XX:-UseSerialGC -XX:+UseG1GC -XX:+PrintCommandLineFlags"),
        image.resolve("bin/jtraced").toString(), "--help");
    assertEquals(0, g1.exit(), g1::toString);
    assertTrue(g1.stdout().contains("-XX:+UseG1GC"), () -> "JPERFETTO_JAVA_OPTS come last: " + g1);
  }

  @Test
  void jtracedLauncherServesAndJperfettoRecordsThroughIt() throws Exception {
    Map<String, String> env = Map.of("PERFETTO_PRODUCER_SOCK_NAME", work.resolve("p.sock").toString(),
        "PERFETTO_CONSUMER_SOCK_NAME", work.resolve("c.sock").toString());
    ProcessBuilder pb = new ProcessBuilder(image.resolve("bin/jtraced").toString());
    pb.environment().putAll(env);
    Process jtraced = pb.redirectErrorStream(true).start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(jtraced.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("jtraced: listening on ")) {
        assertFalse(line.contains("WARNING"), line);
      }
      assertTrue(line != null, "jtraced exited before its ready line");
      assertTrue(Files.exists(work.resolve("c.sock")), "consumer socket after the ready line");
      Path trace = work.resolve("launcher.pftrace");
      Result session = run(env, image.resolve("bin/jperfetto").toString(),
          "--system", "--txt", "-c", "core/src/main/jlink/training.pbtxt", "-o", trace.toString());
      assertEquals(0, session.exit(), session::toString);
      assertFalse(session.stderr().contains("WARNING"), session::toString);
      assertTrue(Files.size(trace) > 0, () -> "trace written through the launchers: " + session);
    } finally {
      jtraced.destroy();
      assertTrue(jtraced.waitFor(30, TimeUnit.SECONDS), "jtraced stops on SIGTERM");
    }
  }

  @Test
  void jtracedWarmsUpBesideServingAtTheLowestPriorityUnlessTurnedOff() throws Exception {
    Path log = work.resolve("warmup.log");
    Process jtraced = startJtraced("w", Map.of(), log);
    try {
      long warmUp = warmUpThread(jtraced.pid());
      assertTrue(warmUp > 0, "a warm-up thread once jtraced serves");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (nice(jtraced.pid(), warmUp) != 19 && System.nanoTime() < deadline) {
        Thread.sleep(1); // its first step sets it
      }
      assertEquals(19, nice(jtraced.pid(), warmUp), "at nice 19");
      while (!Files.readString(log).contains("JIT warm-up done") && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      String text = Files.readString(log);
      assertTrue(text.contains("JIT warm-up done: Result[sessions=8, slices=800000"), text);
      assertTrue(text.contains("stopped=false"), text);
      Thread.sleep(200);
      assertEquals(-1, warmUpThread(jtraced.pid()), "its thread ended");
    } finally {
      jtraced.destroy();
      assertTrue(jtraced.waitFor(30, TimeUnit.SECONDS), "jtraced stops on SIGTERM");
    }
    Process off = startJtraced("w0", Map.of("JPERFETTO_WARMUP", "0"), work.resolve("warmup0.log"));
    try {
      assertEquals(-1, warmUpThread(off.pid()), "JPERFETTO_WARMUP=0: no warm-up");
    } finally {
      off.destroy();
      assertTrue(off.waitFor(30, TimeUnit.SECONDS), "jtraced stops on SIGTERM");
    }
  }

  /** The image's jtraced with debug logging into log, started and serving (its ready line seen). */
  private static Process startJtraced(String name, Map<String, String> env, Path log) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(image.resolve("bin/jtraced").toString(), "--log-level", "debug");
    pb.environment().remove("JPERFETTO_WARMUP");
    pb.environment().putAll(env);
    pb.environment().put("PERFETTO_PRODUCER_SOCK_NAME", work.resolve(name + "-p.sock").toString());
    pb.environment().put("PERFETTO_CONSUMER_SOCK_NAME", work.resolve(name + "-c.sock").toString());
    Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.readString(log).contains("jtraced: listening on ") && System.nanoTime() < deadline) {
      assertTrue(p.isAlive(), () -> "jtraced exited: " + readQuietly(log));
      Thread.sleep(10);
    }
    return p;
  }

  /** The tid of pid's thread named jtraced-warmup, or -1. */
  private static long warmUpThread(long pid) throws IOException {
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : tasks.toList()) {
        try {
          if (Files.readString(t.resolve("comm")).strip().equals("jtraced-warmup")) {
            return Long.parseLong(t.getFileName().toString());
          }
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    }
    return -1;
  }

  /** Field 19 of the thread's stat (after the parenthesised name). */
  private static int nice(long pid, long tid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/task/" + tid + "/stat"));
    return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19 - 3]);
  }

  private static String readQuietly(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Test
  void jperfettoLauncherRecordsTheDemoThroughItsInProcessService() throws Exception {
    Map<String, String> env = Map.of("PERFETTO_PRODUCER_SOCK_NAME", work.resolve("demo-p.sock").toString(),
        "PERFETTO_CONSUMER_SOCK_NAME", work.resolve("demo-c.sock").toString());
    Path trace = work.resolve("demo.perfetto-trace");
    Result demo = run(env, image.resolve("bin/jperfetto").toString(), "demo", "-t", "2s", "-o", trace.toString());
    assertEquals(0, demo.exit(), demo::toString);
    assertFalse(demo.stderr().contains("WARNING"), demo::toString);
    assertTrue(demo.stderr().contains("started an in-process jtraced"), demo::toString);
    org.jperfetto.protos.Trace parsed = org.jperfetto.protos.Trace.parseFrom(Files.readAllBytes(trace));
    assertTrue(parsed.getPacketList().stream().anyMatch(org.jperfetto.protos.TracePacket::hasTrackEvent),
        "the demo workload's track events, recorded through the image's launcher");
    // jvm.jfr inside the image (module path, jlink runtime): JFR's events reach the trace.
    assertTrue(parsed.getPacketList().stream().anyMatch(p -> p.hasTrackEvent()
        && p.getTrackEvent().getCategoriesList().stream().anyMatch(c -> c.startsWith("jvm."))),
        () -> "jvm.jfr events in the image's demo trace: " + demo);
  }

  record Result(int exit, String stdout, String stderr) {}

  private static Result run(Map<String, String> env, String... command) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("JPERFETTO_JAVA_OPTS");
    pb.environment().remove("JPERFETTO_NO_ARCHIVE");
    pb.environment().putAll(env);
    Path err = Files.createTempFile(work, "stderr", ".txt");
    pb.redirectError(err.toFile());
    Process p = pb.start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), () -> String.join(" ", command) + " did not exit");
    return new Result(p.exitValue(), out, Files.readString(err));
  }

  private static String stderrOf(Process p) {
    try {
      return new String(p.getErrorStream().readNBytes(8192), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(stderr unreadable: " + e + ")";
    }
  }
}
