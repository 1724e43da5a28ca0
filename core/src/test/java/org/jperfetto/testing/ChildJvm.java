package org.jperfetto.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The command line of a child JVM for tests that need a second process: this JVM's java, the
 * flags every jperfetto JVM passes (native access for the FFM calls; on JDK 23+ the Unsafe flag
 * protobuf-java needs), any extra JVM flags, then the class path, the main class and its arguments.
 */
public final class ChildJvm {
  /** The launchers' template: it holds the JVM flags jtraced runs with as a daemon. */
  static final Path LAUNCHER_TEMPLATE = Path.of("core/src/main/jlink/launcher.sh.in");
  private static final Pattern DAEMON_FLAGS =
      Pattern.compile("\\[ @NAME@ = jtraced \\] && daemon=\"([^\"]*)\"");

  private ChildJvm() {}

  /**
   * The flags the jtraced launcher gives its JVM (the serial collector on a small heap that it
   * hands back), read from the launcher template, so a test's jtraced child holds memory as the
   * users' does.
   */
  public static List<String> jtracedDaemonFlags() {
    String template;
    try {
      template = Files.readString(LAUNCHER_TEMPLATE);
    } catch (IOException e) {
      throw new UncheckedIOException("the launcher template " + LAUNCHER_TEMPLATE.toAbsolutePath(), e);
    }
    Matcher m = DAEMON_FLAGS.matcher(template);
    if (!m.find()) {
      throw new IllegalStateException("no jtraced daemon flags in " + LAUNCHER_TEMPLATE);
    }
    return Arrays.stream(m.group(1).replace("\\\n", " ").trim().split("\\s+")).toList();
  }

  /** A child running mainClass from the test class path. */
  public static List<String> command(String mainClass, String... args) {
    return command(List.of(), System.getProperty("java.class.path"), mainClass, args);
  }

  /** A child with extra JVM flags and its own class path. */
  public static List<String> command(List<String> jvmFlags, String classPath, String mainClass, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("--enable-native-access=ALL-UNNAMED");
    if (Runtime.version().feature() >= 23) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(jvmFlags);
    command.addAll(List.of("-cp", classPath, mainClass));
    command.addAll(List.of(args));
    return command;
  }
}
