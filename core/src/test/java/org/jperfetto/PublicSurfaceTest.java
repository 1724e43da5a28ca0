package org.jperfetto;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module's public surface: which packages it exports and which public types they hold. Both
 * lists are written out here, so that a new public type or export is a decision someone makes (and
 * documents in the README's list of packages), not a side effect of a cross-package call.
 */
class PublicSurfaceTest {
  private static final Path MAIN = Path.of("core/src/main/java");
  private static final Pattern PUBLIC_TYPE = Pattern.compile(
      "^public (?:final |abstract |sealed |non-sealed )*(?:class|interface|record|enum|@interface) ",
      Pattern.MULTILINE);

  /** Exported package (relative to org.jperfetto) -> its public top-level types. */
  private static final Map<String, Set<String>> SURFACE = Map.of(
      // The consumer client: connect, enable, flush, read, stop; trace files and their packets.
      "consumer", Set.of("ConsumerSockets", "FlushFlags", "OutputFds", "TraceFileReader", "TraceFileWriter",
          "TracePacketSink", "TracingConsumer", "TracingDisabled", "TracingSession"),
      // The producer library: connection, data sources, TraceWriter.
      "producer", Set.of("BufferExhaustedPolicy", "DataSource", "DataSourceHandler", "DataSourceInstance",
          "DetachedInstance", "ProducerSockets", "TraceContext", "TraceWriter", "TracingProducer"),
      // The packet writer a data source's TraceContext hands out, and the pieces it writes with.
      "producer.proto", Set.of("ChunkPacketEncoder", "PacketFragment", "PatchList", "ProtoWriter",
          "ScatteredStreamWriter", "TrackUuids"),
      "producer.track", Set.of("Category", "EventContext", "SpanRecorder", "Track", "TrackEvent"),
      // jvm.jfr: its data source and config; RemoteJfr and StackSampleEncoder are public for the CLI's
      // attach and a benchmark in another package.
      "producer.jfr", Set.of("EventGroup", "JfrConfig", "JfrDataSource", "RemoteJfr", "StackSampleEncoder"),
      // The in-process backend (an embedded jtraced with this process's producer) and config helpers.
      "tracing", Set.of("InProcessSession", "InProcessTracing", "TraceConfigs"));

  @Test
  void theModuleExportsTheApiPackagesAndTheProtosOnly() throws IOException {
    Set<String> exported = exportsOfSource();
    Set<String> expected = new TreeSet<>(SURFACE.keySet());
    expected.add("protos");
    assertEquals(expected, exported, "module-info's exports (relative to org.jperfetto)");
  }

  @Test
  void exportedPackagesHoldOnlyTheirListedPublicTypes() throws IOException {
    Map<String, Set<String>> found = new TreeMap<>();
    for (String pkg : SURFACE.keySet()) {
      Path dir = MAIN.resolve("org/jperfetto/" + pkg.replace('.', '/'));
      try (Stream<Path> files = Files.list(dir)) {
        found.put(pkg, files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("package-info.java"))
            .filter(PublicSurfaceTest::declaresPublicType)
            .map(f -> f.getFileName().toString().replace(".java", ""))
            .collect(Collectors.toCollection(TreeSet::new)));
      }
    }
    Map<String, Set<String>> expected = new TreeMap<>();
    SURFACE.forEach((k, v) -> expected.put(k, new TreeSet<>(v)));
    assertEquals(expected, found, "public top-level types of the exported packages");
  }

  private static Set<String> exportsOfSource() throws IOException {
    String moduleInfo = Files.readString(MAIN.resolve("module-info.java"));
    return Pattern.compile("^\\s*exports org\\.jperfetto\\.([a-z.]+);", Pattern.MULTILINE).matcher(moduleInfo)
        .results().map(m -> m.group(1)).collect(Collectors.toCollection(TreeSet::new));
  }

  private static boolean declaresPublicType(Path file) {
    try {
      return PUBLIC_TYPE.matcher(Files.readString(file)).find();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
