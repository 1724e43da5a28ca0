package org.jperfetto.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * JDKs other than the one the tests run on, for the tests of what jperfetto does with JVMs it
 * cannot run in: found under /usr/lib/jvm (or $JPERFETTO_OLD_JDKS, a directory of JDKs) by the
 * JAVA_VERSION of their {@code release} file. Where none is installed the caller skips its test
 * and says which JDK it missed.
 */
public final class OldJdk {
  private static final Pattern VERSION = Pattern.compile("^JAVA_VERSION=\"(1\\.)?(\\d+)[^\"]*\"", Pattern.MULTILINE);
  /** The program the old-JDK tests run (src/test/old-jdk). */
  public static final Path TARGET_SOURCE = Path.of("src/test/old-jdk/OldJdkTarget.java").toAbsolutePath();

  private OldJdk() {}

  /** The home of an installed JDK (not a JRE: it needs bin/jcmd) of that feature release. */
  public static Optional<Path> home(int feature) {
    String env = System.getenv("JPERFETTO_OLD_JDKS");
    Path root = Path.of(env != null && !env.isEmpty() ? env : "/usr/lib/jvm");
    try (Stream<Path> homes = Files.list(root)) {
      for (Path h : homes.sorted().toList()) {
        if (Files.isExecutable(h.resolve("bin/java")) && Files.isExecutable(h.resolve("bin/jcmd"))
            && feature(h) == feature) {
          return Optional.of(h.toRealPath());
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** Why a test for that JDK is skipped. */
  public static String missing(int feature) {
    return "no JDK " + feature + " on this machine (looked in $JPERFETTO_OLD_JDKS or /usr/lib/jvm; Debian 12"
        + " packages only OpenJDK 17, and no registry this machine reaches serves a JDK " + feature + ")";
  }

  /**
   * The command that runs OldJdkTarget on the JDK at home, with jvmFlags, then its arguments: the
   * program compiled here for Java 11 (once per test JVM; the source launcher of a cold JDK 17
   * would take seconds to do it on a busy machine).
   */
  public static List<String> targetCommand(Path home, List<String> jvmFlags, String... args) throws IOException {
    List<String> c = new java.util.ArrayList<>();
    c.add(home.resolve("bin/java").toString());
    c.addAll(jvmFlags);
    c.addAll(List.of("-cp", targetClasses().toString(), "OldJdkTarget"));
    c.addAll(List.of(args));
    return c;
  }

  private static Path compiled;

  private static synchronized Path targetClasses() throws IOException {
    if (compiled == null) {
      Path out = Files.createTempDirectory("old-jdk-target");
      out.toFile().deleteOnExit();
      java.util.spi.ToolProvider javac = java.util.spi.ToolProvider.findFirst("javac")
          .orElseThrow(() -> new IOException("no javac in " + System.getProperty("java.home")));
      int rc = javac.run(System.out, System.err, "--release", "11", "-d", out.toString(), TARGET_SOURCE.toString());
      if (rc != 0) {
        throw new IOException("javac " + TARGET_SOURCE + " failed: " + rc);
      }
      out.resolve("OldJdkTarget.class").toFile().deleteOnExit();
      compiled = out;
    }
    return compiled;
  }

  private static int feature(Path home) {
    try {
      Matcher m = VERSION.matcher(Files.readString(home.resolve("release")));
      return m.find() ? Integer.parseInt(m.group(2)) : 0;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }
}
