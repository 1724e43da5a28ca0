package org.jperfetto.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM for tests that need a second process: this JVM's java, the
 * flags every jperfetto JVM passes (native access for the FFM calls; on JDK 23+ the Unsafe flag
 * protobuf-java needs), any extra JVM flags, then the class path, the main class and its arguments.
 */
public final class ChildJvm {
  private ChildJvm() {}

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
