package org.jperfetto.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.jperfetto.agent.boot.AgentBoot;

/**
 * Builds {@code jperfetto-agent.jar}: {@link AgentBoot} and the hooks at the top (what the JVM
 * puts on the system class path), and, nested under {@link AgentBoot#LIB_DIR}, jperfetto itself,
 * protobuf-java and ASM, which AgentBoot loads in a class loader of their own. The package phase
 * runs {@link #main} ({@code target/jperfetto-agent.jar}); the agent tests build theirs with
 * {@link #buildFromClassPath}, so both are made the same way.
 */
public final class AgentJar {
  /** One class of each library the agent needs, to find its jar. */
  private static final List<String> LIBRARY_CLASSES = List.of("com.google.protobuf.Message",
      "org.objectweb.asm.ClassVisitor", "org.objectweb.asm.tree.ClassNode",
      "org.objectweb.asm.commons.AdviceAdapter");

  /**
   * The jar's entry class, compiled for Java 8 (src/main/java8) so that an old JDK can load it and
   * hear why the agent does not start; named, not referenced: it is compiled after this class.
   */
  static final String ENTRY_CLASS = AgentBoot.class.getPackageName() + ".AgentEntry";

  private AgentJar() {}

  /** {@code AgentJar OUTPUT.jar}: from the class path this runs on. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: AgentJar OUTPUT.jar");
      System.exit(2);
    }
    Path out = buildFromClassPath(Path.of(args[0]));
    System.out.println("jperfetto agent jar: " + out + " (" + Files.size(out) / 1024 + " KiB)");
  }

  /** Builds the agent jar from the jperfetto classes and libraries this JVM loaded them from. */
  public static Path buildFromClassPath(Path out) throws IOException {
    Path jperfetto = location(AgentBoot.class);
    List<Path> libs = new ArrayList<>();
    for (String name : LIBRARY_CLASSES) {
      try {
        libs.add(location(Class.forName(name, false, AgentJar.class.getClassLoader())));
      } catch (ClassNotFoundException e) {
        throw new IOException("the agent needs " + name + " on the class path to build its jar", e);
      }
    }
    return build(out, jperfetto, libs);
  }

  private static Path location(Class<?> c) throws IOException {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | RuntimeException e) {
      throw new IOException("cannot locate the jar of " + c.getName() + ": " + e, e);
    }
  }

  /**
   * Writes the agent jar.
   *
   * @param jperfetto jperfetto's classes: a jar or a class directory
   * @param libraries the jars to nest next to it
   */
  public static Path build(Path out, Path jperfetto, List<Path> libraries) throws IOException {
    Manifest manifest = new Manifest();
    Attributes a = manifest.getMainAttributes();
    a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    a.putValue("Premain-Class", ENTRY_CLASS);
    a.putValue("Agent-Class", ENTRY_CLASS);
    a.putValue("Can-Retransform-Classes", "true");
    a.putValue("Can-Redefine-Classes", "false");
    a.putValue("Implementation-Title", "jperfetto agent");
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    String bootDir = AgentBoot.class.getPackageName().replace('.', '/') + "/";
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out), manifest)) {
      byte[] jperfettoJar = Files.isDirectory(jperfetto) ? jarOf(jperfetto) : Files.readAllBytes(jperfetto);
      // The shared package at the top, from the same jperfetto build.
      addDirectories(jar, bootDir);
      boolean entry = false;
      try (java.util.jar.JarInputStream in = new java.util.jar.JarInputStream(
          new java.io.ByteArrayInputStream(jperfettoJar))) {
        for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
          String name = e.getName();
          if (name.startsWith(bootDir) && name.endsWith(".class") && name.indexOf('/', bootDir.length()) < 0) {
            put(jar, name, in.readAllBytes());
            entry |= name.equals(ENTRY_CLASS.replace('.', '/') + ".class");
          }
        }
      }
      if (!entry) {
        throw new IOException(jperfetto + " has no " + ENTRY_CLASS + " (compiled from src/main/java8 by the"
            + " build's agent-entry execution): build with ./mvnw");
      }
      jar.putNextEntry(new JarEntry("META-INF/jperfetto/"));
      jar.putNextEntry(new JarEntry(AgentBoot.LIB_DIR));
      put(jar, AgentBoot.LIB_DIR + "jperfetto.jar", jperfettoJar);
      for (Path lib : libraries) {
        put(jar, AgentBoot.LIB_DIR + lib.getFileName(), Files.readAllBytes(lib));
      }
    }
    return out;
  }

  private static void addDirectories(JarOutputStream jar, String dir) throws IOException {
    StringBuilder path = new StringBuilder();
    for (String part : dir.split("/")) {
      path.append(part).append('/');
      jar.putNextEntry(new JarEntry(path.toString()));
    }
  }

  private static void put(JarOutputStream jar, String name, byte[] bytes) throws IOException {
    jar.putNextEntry(new JarEntry(name));
    jar.write(bytes);
    jar.closeEntry();
  }

  /** A class directory as jar bytes (module-info included: harmless on a class path). */
  private static byte[] jarOf(Path dir) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (JarOutputStream jar = new JarOutputStream(bytes, minimalManifest()); Stream<Path> files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.sorted()::iterator) {
        String name = dir.relativize(f).toString().replace('\\', '/');
        if (name.isEmpty() || name.equals("META-INF/MANIFEST.MF") || name.equals("META-INF")) {
          continue;
        }
        if (Files.isDirectory(f)) {
          jar.putNextEntry(new JarEntry(name + "/"));
        } else {
          jar.putNextEntry(new JarEntry(name));
          Files.copy(f, jar);
        }
      }
    }
    return bytes.toByteArray();
  }

  private static Manifest minimalManifest() {
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    return m;
  }
}
