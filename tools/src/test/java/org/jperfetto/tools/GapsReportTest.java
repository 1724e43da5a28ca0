package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GapsReportTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final ToolContext ctx = new ToolContext(new PrintStream(out, true, StandardCharsets.UTF_8),
      new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());

  /** The reference workload's shape: slice i with debug annotation i = i, then its end. */
  private static Path workloadTrace(Path dir, int n, Set<Integer> lost) throws IOException {
    Trace.Builder trace = Trace.newBuilder();
    for (int i = 0; i < n; i++) {
      if (lost.contains(i)) {
        continue;
      }
      trace.addPacket(TracePacket.newBuilder().setTimestamp(i).setTrackEvent(TrackEvent.newBuilder()
          .setType(TrackEvent.Type.TYPE_SLICE_BEGIN).setNameIid(1)
          .addDebugAnnotations(DebugAnnotation.newBuilder().setNameIid(1).setIntValue(i))));
      trace.addPacket(TracePacket.newBuilder().setTimestamp(i).setTrackEvent(TrackEvent.newBuilder()
          .setType(TrackEvent.Type.TYPE_SLICE_END)));
    }
    Path file = dir.resolve("trace");
    Files.write(file, trace.build().toByteArray());
    return file;
  }

  private int run(String... args) {
    out.reset();
    return Tools.run(java.util.stream.Stream.concat(java.util.stream.Stream.of(GapsReport.NAME),
        java.util.Arrays.stream(args)).toArray(String[]::new), ctx);
  }

  @Test
  void saysWhichIndicesAreMissing(@TempDir Path dir) throws IOException {
    Path file = workloadTrace(dir, 40, Set.of(3, 4, 20, 39));
    assertEquals(Tools.EXIT_OK, run("40", file.toString()));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertEquals("slice_begins=36 indexed_slices=40 missing_indices=4 gaps=3 largest_gap=2 first_gap_at=3"
        + " missing_per_twentieth=0,1,1,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,1", line); // 2 indices a part
    // Without the count the lost last slice is out of sight: the range ends at the largest index.
    assertEquals(Tools.EXIT_OK, run(file.toString()));
    assertTrue(out.toString(StandardCharsets.UTF_8).contains(" indexed_slices=39 missing_indices=3 "),
        out.toString(StandardCharsets.UTF_8));
  }

  @Test
  void badArgumentsAreRefused(@TempDir Path dir) throws IOException {
    Path file = workloadTrace(dir, 2, Set.of());
    assertEquals(Tools.EXIT_ERROR, run("0", file.toString()));
    assertEquals(Tools.EXIT_ERROR, run("x", file.toString()));
    assertEquals(Tools.EXIT_ERROR, run());
    assertEquals(Tools.EXIT_ERROR, run("2", file.toString(), "extra"));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: jperfetto-tools gaps [N] TRACE"));
  }
}
