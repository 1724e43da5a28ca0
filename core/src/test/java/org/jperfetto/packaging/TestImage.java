package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * Builds a jperfetto runtime image in a scratch directory the way `./mvnw package` does, from the
 * compiled classes: the protobuf-java descriptor from src/main/jlink compiled onto a copy of the jar,
 * jlink with src/main/jlink/jlink.args, then scripts/install-launchers.sh. The test main
 * {@link ImageDemo} is patched into module org.jperfetto so the launcher template can run it.
 */
final class TestImage {
  static final Path PROTOBUF_MODULE_INFO = Path.of("core/src/main/jlink/com.google.protobuf/module-info.java");
  static final Path JLINK_ARGS = Path.of("core/src/main/jlink/jlink.args");
  static final Path CLASSES = Path.of("target/classes");
  static final Path TEST_CLASSES = Path.of("target/test-classes");
  static final String DEMO_MAIN = "org.jperfetto/" + ImageDemo.class.getName();

  private TestImage() {}

  /** The named tool of this JDK, or why it is missing. */
  static Optional<ToolProvider> tool(String name) {
    return ToolProvider.findFirst(name);
  }

  static String missingToolReason(String name) {
    String module = switch (name) {
      case "javac" -> "jdk.compiler";
      case "jar" -> "jdk.jartool";
      default -> "jdk." + name;
    };
    return "the JDK running the tests (java.home=" + System.getProperty("java.home") + ") has no '" + name
        + "' tool: ToolProvider.findFirst(\"" + name + "\") found none because module " + module
        + " is absent, so this is a JRE or a jlink'ed runtime rather than a full JDK; building the"
        + " runtime image needs a full JDK 22+";
  }

  /** Runs a JDK tool in-process and returns its output; fails with that output on a non-zero exit. */
  static String run(String name, List<String> args) {
    ToolProvider tool = tool(name).orElseThrow(() -> new IllegalStateException(missingToolReason(name)));
    StringWriter out = new StringWriter();
    try (PrintWriter pw = new PrintWriter(out)) {
      int rc = tool.run(pw, pw, args.toArray(String[]::new));
      pw.flush();
      assertEquals(0, rc, () -> name + " " + args + " failed:\n" + out);
    }
    return out.toString();
  }

  /** The protobuf-java jar the tests run with (the same artifact the pom resolves). */
  static Path protobufJar() {
    try {
      return Path.of(com.google.protobuf.TextFormat.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("protobuf-java location", e);
    }
  }

  /** Copies the protobuf-java jar into {@code modules} with our module descriptor added; returns it. */
  static Path modularProtobuf(Path work, Path modules) throws IOException {
    Path descriptorOut = Files.createDirectories(work.resolve("protobuf-descriptor"));
    run("javac", List.of("--release", "22", "--patch-module", "com.google.protobuf=" + protobufJar(),
        "-d", descriptorOut.toString(), PROTOBUF_MODULE_INFO.toString()));
    Path jar = modules.resolve("protobuf-java.jar");
    Files.copy(protobufJar(), jar, StandardCopyOption.REPLACE_EXISTING);
    run("jar", List.of("--update", "--file", jar.toString(), "-C", descriptorOut.toString(), "module-info.class"));
    return jar;
  }

  /** target/classes as an exploded org.jperfetto module, with the ImageDemo classes added. */
  static Path explodedModule(Path modules) throws IOException {
    Path module = modules.resolve("org.jperfetto");
    copyTree(CLASSES, module);
    Path demoPackage = Path.of(ImageDemo.class.getPackageName().replace('.', '/'));
    Files.createDirectories(module.resolve(demoPackage));
    try (Stream<Path> files = Files.list(TEST_CLASSES.resolve(demoPackage))) {
      for (Path f : files.filter(p -> p.getFileName().toString().startsWith("ImageDemo")).toList()) {
        Files.copy(f, module.resolve(demoPackage).resolve(f.getFileName()));
      }
    }
    return module;
  }

  /** The jlink options the build uses, one per line in src/main/jlink/jlink.args. */
  static List<String> jlinkArgs() throws IOException {
    List<String> args = new ArrayList<>();
    for (String line : Files.readAllLines(JLINK_ARGS)) {
      for (String word : line.trim().split("\\s+")) {
        if (!word.isEmpty()) {
          args.add(word);
        }
      }
    }
    return args;
  }

  /** Links the image into {@code work/image} and installs the launchers; returns the image. */
  static Path build(Path work, List<String> launchers) throws IOException, InterruptedException {
    Path modules = Files.createDirectories(work.resolve("modules"));
    modularProtobuf(work, modules);
    explodedModule(modules);
    Path image = work.resolve("image");
    List<String> args = new ArrayList<>(jlinkArgs());
    args.addAll(List.of("--module-path", modules.toString(), "--output", image.toString()));
    run("jlink", args);
    List<String> install = new ArrayList<>(List.of("sh", "scripts/install-launchers.sh", image.toString()));
    install.addAll(launchers);
    Process p = new ProcessBuilder(install).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), () -> "install-launchers failed: " + out);
    return image;
  }

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      files.forEach(src -> {
        Path dst = to.resolve(from.relativize(src).toString());
        try {
          if (Files.isDirectory(src)) {
            Files.createDirectories(dst);
          } else {
            Files.copy(src, dst);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
