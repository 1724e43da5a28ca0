package org.jperfetto.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jperfetto.consumer.TraceFileReader;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TrackEvent;

/**
 * {@code jperfetto-tools gaps [N] TRACE}: where the reference burst (docs/performance.md) lost its
 * slices. Its slice begins carry their index as their first integer debug annotation; the indices
 * missing from the trace, as runs and per twentieth of the burst ({@link SliceIndexGaps}), say at
 * which point the service or the producer dropped data. N is how many slices the burst emitted;
 * without it, the range ends at the largest index seen. Prints one {@code key=value} line; reads the
 * file as a stream (constant memory beside one bit per index). {@code jperfetto summary TRACE} counts
 * the rest (kept, readable, the loss statistics).
 */
final class GapsReport implements Tool {
  static final String NAME = "gaps";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String usage() {
    return "[N] TRACE: which slice indices of a reference burst of N slices the trace lacks";
  }

  @Override
  public int run(String[] args, ToolContext ctx) throws IOException {
    long expected = 0;
    if (args.length == 2) {
      try {
        expected = Long.parseLong(args[0]);
      } catch (NumberFormatException e) {
        expected = -1;
      }
    }
    if (args.length < 1 || args.length > 2 || expected < 0 || args.length == 2 && expected == 0) {
      ctx.err().println("usage: jperfetto-tools " + NAME + " [N] TRACE (N: the burst's slice count, positive)");
      return Tools.EXIT_ERROR;
    }
    SliceIndexGaps gaps = new SliceIndexGaps();
    long begins;
    try (InputStream in = Files.newInputStream(Path.of(args[args.length - 1]))) {
      begins = collect(in, gaps);
    }
    ctx.out().println("slice_begins=" + begins + " " + gaps.report(expected).fields());
    return Tools.EXIT_OK;
  }

  /** Gives gaps the index of every slice begin of a trace file; returns how many begins it holds. */
  static long collect(InputStream in, SliceIndexGaps gaps) throws IOException {
    long[] begins = {0};
    TraceFileReader.forEachPacket(in, p -> {
      if (p.hasTrackEvent() && p.getTrackEvent().getType() == TrackEvent.Type.TYPE_SLICE_BEGIN) {
        begins[0]++;
        addIndex(p.getTrackEvent(), gaps);
      }
    });
    return begins[0];
  }

  /** The slice's index: its first integer debug annotation, if it has one. */
  private static void addIndex(TrackEvent event, SliceIndexGaps gaps) {
    for (DebugAnnotation a : event.getDebugAnnotationsList()) {
      if (a.hasIntValue()) {
        gaps.add(a.getIntValue());
        return;
      }
    }
  }
}
