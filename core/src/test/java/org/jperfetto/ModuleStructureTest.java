package org.jperfetto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the package map of docs/architecture.md true: each package of the module may import only the packages
 * listed for it. A new package must be added here, which is the moment to think about its place.
 */
class ModuleStructureTest {
  private static final Path MAIN = Path.of("core/src/main/java/org/jperfetto");
  /** An import of a class of the module: group 1 is its package below org.jperfetto ("" for the root). */
  private static final Pattern IMPORT = Pattern.compile(
      "^import\\s+(?:static\\s+)?org\\.jperfetto\\.((?:[a-z0-9_]+\\.)*)[A-Z]", Pattern.MULTILINE);

  /**
   * package (relative to org.jperfetto; "" is the root package) -> packages it may use besides
   * itself and java.*. The bottom floor, java.base only: the root package (BuildVersion, a fact
   * about jperfetto as a whole), {@code wire} (protobuf wire arithmetic, the decoder cursor), and
   * beside them {@code os}; every package may use the root.
   */
  private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
      Map.entry("", Set.of()),
      Map.entry("wire", Set.of()),
      Map.entry("protos", Set.of()),
      Map.entry("os", Set.of()),
      // The SMB ABI: its fragment sizes are redundant varints.
      Map.entry("abi", Set.of("wire")),
      Map.entry("ipc.wire", Set.of("wire", "protos")),
      Map.entry("ipc", Set.of("ipc.wire", "wire", "os", "protos")),
      Map.entry("service", Set.of("abi", "wire", "protos", "service.buffer")),
      Map.entry("service.buffer", Set.of("abi", "wire", "protos")),
      Map.entry("service.ipc", Set.of("service", "service.buffer", "ipc", "ipc.wire", "os", "abi", "wire", "protos")),
      Map.entry("producer", Set.of("abi", "ipc", "ipc.wire", "os", "wire", "protos")),
      Map.entry("consumer", Set.of("ipc", "ipc.wire", "os", "wire", "protos")),
      // The in-process backend: an embedded service with this process's producer and consumers.
      Map.entry("tracing", Set.of("service", "service.ipc", "producer", "consumer", "protos")),
      // The -javaagent: a producer with TrackEvent and jvm.jfr; agent.boot is the JDK-only part
      // instrumented application code links to.
      Map.entry("agent.boot", Set.of()),
      Map.entry("agent", Set.of("agent.boot", "producer", "protos")),
      Map.entry("cli", Set.of("*")));

  @Test
  void packagesImportOnlyWhatTheDesignAllows() throws IOException {
    List<String> violations = new ArrayList<>();
    // The module has at least module-info; a clone with no package yet has nothing to check.
    assertTrue(Files.isRegularFile(Path.of("core/src/main/java/module-info.java")), "run from the project root");
    if (!Files.isDirectory(MAIN)) {
      return;
    }
    try (Stream<Path> files = Files.walk(MAIN)) {
      for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        String pkg = MAIN.relativize(file.getParent()).toString().replace('/', '.');
        String owner = ownerOf(pkg);
        if (owner == null) {
          violations.add(file + ": package org.jperfetto." + pkg + " is not in the package map");
          continue;
        }
        Set<String> allowed = ALLOWED.get(owner);
        Matcher m = IMPORT.matcher(Files.readString(file));
        while (m.find()) {
          String imported = m.group(1).isEmpty() ? "" : m.group(1).substring(0, m.group(1).length() - 1);
          String target = ownerOf(imported);
          if (target == null || target.equals(owner) || target.isEmpty() || allowed.contains("*")) {
            continue;
          }
          if (!allowed.contains(target)) {
            violations.add(file + ": " + owner + " must not use " + target);
          }
        }
      }
    }
    assertEquals(List.of(), violations);
  }

  /** java.base's packages that the module's lowest packages use. */
  private static final List<String> JAVA_BASE =
      List.of("java.lang.", "java.io.", "java.nio.", "java.util.", "java.net.");

  /** The bottom floor, abi and os import nothing beyond java.base: no library, no other JDK module. */
  @Test
  void bottomFloorUsesJavaBaseOnly() throws IOException {
    Pattern anyImport = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+);", Pattern.MULTILINE);
    List<String> violations = new ArrayList<>();
    for (String pkg : List.of("", "wire", "abi", "os")) {
      Path dir = pkg.isEmpty() ? MAIN : MAIN.resolve(pkg.replace('.', '/'));
      try (Stream<Path> files = Files.list(dir)) {
        for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
          Matcher m = anyImport.matcher(Files.readString(file));
          while (m.find()) {
            String name = m.group(1);
            if (JAVA_BASE.stream().noneMatch(name::startsWith) && !name.startsWith("org.jperfetto.")) {
              violations.add(file + " imports " + name);
            }
          }
        }
      }
    }
    assertEquals(List.of(), violations);
  }

  @Test
  void mapCoversDesignPackages() {
    assertTrue(ALLOWED.keySet().containsAll(Set.of("", "wire", "abi", "os", "ipc", "ipc.wire", "protos", "service",
        "service.ipc", "producer", "consumer", "cli")));
  }

  /** The most specific package of the map that pkg is, or is inside of (the root holds only itself). */
  private static String ownerOf(String pkg) {
    String best = null;
    for (String key : ALLOWED.keySet()) {
      boolean inside = pkg.equals(key) || (!key.isEmpty() && pkg.startsWith(key + "."));
      if (inside && (best == null || key.length() > best.length())) {
        best = key;
      }
    }
    return best;
  }
}
