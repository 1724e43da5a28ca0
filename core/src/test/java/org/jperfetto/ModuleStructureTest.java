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
  private static final Pattern IMPORT =
      Pattern.compile("^import\\s+(?:static\\s+)?org\\.jperfetto\\.([a-z0-9_.]+)\\.[A-Z]", Pattern.MULTILINE);

  /** package (relative to org.jperfetto) -> packages it may use besides itself and java.*. */
  private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
      Map.entry("protos", Set.of()),
      Map.entry("abi", Set.of()),
      Map.entry("os", Set.of()),
      Map.entry("ipc.wire", Set.of("protos")),
      Map.entry("ipc", Set.of("ipc.wire", "abi", "os", "protos")),
      Map.entry("service", Set.of("abi", "protos", "service.buffer")),
      Map.entry("service.buffer", Set.of("abi", "protos")),
      Map.entry("service.ipc", Set.of("service", "service.buffer", "ipc", "ipc.wire", "os", "abi", "protos")),
      Map.entry("producer", Set.of("abi", "ipc", "ipc.wire", "os", "protos")),
      // abi for the trace file's packet record (TracePacketRecord), which the service writes too.
      Map.entry("consumer", Set.of("abi", "ipc", "ipc.wire", "os", "protos")),
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
        Path rel = MAIN.relativize(file.getParent());
        if (rel.toString().isEmpty()) {
          continue; // module-info lives one level up; nothing else sits at the root
        }
        String pkg = rel.toString().replace('/', '.');
        String owner = ownerOf(pkg);
        if (owner == null) {
          violations.add(file + ": package org.jperfetto." + pkg + " is not in the package map");
          continue;
        }
        Set<String> allowed = ALLOWED.get(owner);
        Matcher m = IMPORT.matcher(Files.readString(file));
        while (m.find()) {
          String target = ownerOf(m.group(1));
          if (target == null || target.equals(owner) || allowed.contains("*")) {
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

  @Test
  void mapCoversDesignPackages() {
    assertTrue(ALLOWED.keySet().containsAll(Set.of("abi", "os", "ipc", "ipc.wire", "protos", "service",
        "service.ipc", "producer", "consumer", "cli")));
  }

  /** The most specific package of the map that pkg is, or is inside of. */
  private static String ownerOf(String pkg) {
    String best = null;
    for (String key : ALLOWED.keySet()) {
      if ((pkg.equals(key) || pkg.startsWith(key + ".")) && (best == null || key.length() > best.length())) {
        best = key;
      }
    }
    return best;
  }
}
