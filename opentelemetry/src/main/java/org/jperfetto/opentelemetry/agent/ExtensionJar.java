package org.jperfetto.opentelemetry.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.jperfetto.opentelemetry.PerfettoSpanProcessor;

/**
 * Builds {@code jperfetto-opentelemetry-extension.jar}, the jar for {@code -Dotel.javaagent.extensions}:
 * one flat jar of this module's classes, jperfetto's and protobuf-java's (the agent loads an
 * extension in a class loader of its own, so they never meet the app's protobuf-java), and none of
 * OpenTelemetry's, which the agent provides. The package phase runs {@link #main}; the IT builds
 * its own with {@link #buildFromClassPath}, so both are made the same way.
 */
public final class ExtensionJar {
  /** One class of each part of the jar, to find where it was loaded from. */
  private static final List<String> PARTS = List.of(PerfettoSpanProcessor.class.getName(),
      "org.jperfetto.producer.TracingProducer", "com.google.protobuf.Message");

  private ExtensionJar() {}

  /** {@code ExtensionJar OUTPUT.jar}: from the class path this runs on. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: ExtensionJar OUTPUT.jar");
      System.exit(2);
    }
    Path out = buildFromClassPath(Path.of(args[0]));
    System.out.println("jperfetto OpenTelemetry extension jar: " + out + " (" + Files.size(out) / 1024 + " KiB)");
  }

  /** Builds the jar from the class directories and jars this JVM loaded its parts from. */
  public static Path buildFromClassPath(Path out) throws IOException {
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().putValue("Implementation-Title", "jperfetto OpenTelemetry extension");
    Set<String> written = new HashSet<>();
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out), manifest)) {
      for (String part : PARTS) {
        Path from = location(part);
        if (Files.isDirectory(from)) {
          addDirectory(jar, from, written);
        } else {
          addJar(jar, from, written);
        }
      }
    }
    if (!written.contains("org/jperfetto/opentelemetry/agent/ExtensionEntry.class")) {
      throw new IOException("no ExtensionEntry class (compiled from src/main/java8 by the build's extension-entry"
          + " execution): build with ./mvnw");
    }
    return out;
  }

  private static Path location(String className) throws IOException {
    try {
      Class<?> c = Class.forName(className, false, ExtensionJar.class.getClassLoader());
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (ClassNotFoundException | URISyntaxException | RuntimeException e) {
      throw new IOException("cannot locate the classes of " + className + ": " + e, e);
    }
  }

  /** Whether an entry belongs in the flat jar: not a manifest, signature or module descriptor. */
  private static boolean kept(String name) {
    return !name.equals("META-INF/MANIFEST.MF") && !name.endsWith("module-info.class")
        && !(name.startsWith("META-INF/") && (name.endsWith(".SF") || name.endsWith(".RSA") || name.endsWith(".DSA")));
  }

  private static void addDirectory(JarOutputStream jar, Path dir, Set<String> written) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.sorted()::iterator) {
        String name = dir.relativize(f).toString().replace('\\', '/');
        if (name.isEmpty()) {
          continue;
        }
        if (Files.isDirectory(f)) {
          name += "/";
        }
        if (kept(name) && written.add(name)) {
          jar.putNextEntry(new JarEntry(name));
          if (!Files.isDirectory(f)) {
            Files.copy(f, jar);
          }
          jar.closeEntry();
        }
      }
    }
  }

  private static void addJar(JarOutputStream jar, Path file, Set<String> written) throws IOException {
    try (InputStream raw = Files.newInputStream(file); JarInputStream in = new JarInputStream(raw)) {
      for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
        String name = e.getName();
        if (kept(name) && written.add(name)) {
          jar.putNextEntry(new JarEntry(name));
          in.transferTo(jar);
          jar.closeEntry();
        }
      }
    }
  }
}
