package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceSummaryTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]),
      new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
      Map.of(), false);

  /** The reference workload's shape: slice i with debug annotation i = i, then its end. */
  private static Path workloadTrace(Path dir, int n, int... lost) throws IOException {
    Trace.Builder trace = Trace.newBuilder();
    outer:
    for (int i = 0; i < n; i++) {
      for (int l : lost) {
        if (l == i) {
          continue outer;
        }
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

  @Test
  void countsTheSlicesOfAWorkload(@TempDir Path dir) throws IOException {
    Path file = workloadTrace(dir, 40, 3);
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertTrue(line.startsWith("packets=78 slice_begins=39 readable_slice_begins=39 slice_ends=39 "), line);
    assertTrue(!line.contains("missing_indices"), line);
  }

  /**
   * A slice begin on sequence seq that needs incremental state; cleared: it also clears the state;
   * dropped: it says packets were lost before it.
   */
  private static TracePacket begin(int seq, boolean cleared, boolean dropped) {
    int flags = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE
        | (cleared ? TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE : 0);
    return TracePacket.newBuilder().setTrustedPacketSequenceId(seq).setSequenceFlags(flags)
        .setPreviousPacketDropped(dropped ? 1 : 0)
        .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN)).build();
  }

  @Test
  void theServicesMarkOnEachSequencesFirstPacketIsNoLoss(@TempDir Path dir) throws IOException {
    Trace trace = Trace.newBuilder()
        .addPacket(begin(1, true, true)) // the service marks every sequence's first packet
        .addPacket(begin(2, true, true))
        .addPacket(begin(1, false, false))
        .addPacket(begin(2, true, true)) // a real loss on sequence 2
        .build();
    Path file = dir.resolve("trace");
    Files.write(file, trace.toByteArray());
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertTrue(line.contains(" previous_packet_dropped=1 "), line);
  }

  @Test
  void sequencePacketLossIsWhatTraceProcessorReportsForTheSequencesTheServiceLists(@TempDir Path dir)
      throws IOException {
    TracePacket lead = TracePacket.newBuilder().setTrustedPacketSequenceId(3).setPreviousPacketDropped(1).build();
    Trace trace = Trace.newBuilder()
        .addPacket(begin(1, true, true))
        .addPacket(begin(1, true, true)) // counted: sequence 1 is listed below
        .addPacket(lead) // a writer that lost before its first chunk: its lead, then its marked packet
        .addPacket(begin(3, true, true)) // counted
        .addPacket(begin(4, true, true))
        .addPacket(begin(4, true, true)) // not counted: sequence 4 is not in writer_stats
        .addPacket(TracePacket.newBuilder().setTraceStats(TraceStats.newBuilder()
            .addWriterStats(TraceStats.WriterStats.newBuilder().setSequenceId(1).setBuffer(0))
            .addWriterStats(TraceStats.WriterStats.newBuilder().setSequenceId(3).setBuffer(0))))
        .build();
    Path file = dir.resolve("trace");
    Files.write(file, trace.toByteArray());
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertTrue(line.contains(" previous_packet_dropped=3 "), line);
    assertTrue(line.contains(" sequence_packet_loss=2 "), line);
  }

  @Test
  void readableSliceBeginsLeaveOutWhatTraceProcessorSkipsAfterALoss(@TempDir Path dir) throws IOException {
    Trace trace = Trace.newBuilder()
        .addPacket(begin(1, false, false)) // before any state: skipped
        .addPacket(begin(1, true, false)) // read from here
        .addPacket(begin(1, false, false))
        .addPacket(begin(2, true, false)) // another sequence, unaffected by the loss on 1
        .addPacket(begin(1, false, true)) // loss on 1: skipped, and so is the rest of 1...
        .addPacket(begin(1, false, false))
        .addPacket(begin(2, false, false))
        .addPacket(begin(1, true, true)) // ...until a packet clears the state (loss or not)
        .addPacket(begin(1, false, false))
        .addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(1).setPreviousPacketDropped(1)
            .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN)).build()) // needs none
        .addPacket(begin(1, false, false)) // skipped: the loss above was not followed by a clear
        .build();
    Path file = dir.resolve("trace");
    Files.write(file, trace.toByteArray());
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertTrue(line.startsWith("packets=11 slice_begins=11 readable_slice_begins=7 "), line);
    assertTrue(line.endsWith(" unreadable_before_clear=1 unreadable_after_loss=3"), line);
    String why = err.toString(StandardCharsets.UTF_8);
    assertTrue(why.contains("1 of 11 slice begins are in the file but trace_processor cannot read them"), why);
    assertTrue(why.contains("they come before their sequence's first incremental-state clear in the file"), why);
    assertTrue(why.contains("3 of 11 slice begins are in the file but trace_processor cannot read them: data was "
        + "lost before them"), why);
  }

  @Test
  void aWrappedRingWithoutClearsSaysWhyNothingIsReadableAndNamesTheFix(@TempDir Path dir) throws IOException {
    Trace.Builder trace = Trace.newBuilder();
    for (int i = 0; i < 5; i++) { // the sequence's first packets, which cleared its state, were overwritten
      trace.addPacket(begin(7, false, false));
    }
    trace.addPacket(TracePacket.newBuilder().setTraceStats(org.jperfetto.protos.TraceStats.newBuilder()
        .addBufferStats(org.jperfetto.protos.TraceStats.BufferStats.newBuilder().setChunksOverwritten(42))));
    Path file = dir.resolve("trace");
    Files.write(file, trace.build().toByteArray());
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    String line = out.toString(StandardCharsets.UTF_8).trim();
    assertTrue(line.startsWith("packets=6 slice_begins=5 readable_slice_begins=0 "), line);
    assertTrue(line.endsWith(" unreadable_before_clear=5 unreadable_after_loss=0"), line);
    String why = err.toString(StandardCharsets.UTF_8).trim();
    assertEquals(1, why.lines().count(), why);
    assertTrue(why.startsWith("jperfetto summary: 5 of 5 slice begins are in the file but trace_processor cannot "
        + "read them: the packets that set their sequence's incremental state"), why);
    assertTrue(why.contains("as when a ring buffer wraps (this one overwrote 42 chunks)"), why);
    assertTrue(why.endsWith("incremental_state_config { clear_period_ms: "
        + org.jperfetto.service.ClearPeriod.DEFAULT_MS + " }"), why);
  }

  @Test
  void aFullyReadableTraceGetsNoExplanation(@TempDir Path dir) throws IOException {
    Path file = workloadTrace(dir, 10);
    assertEquals(Jperfetto.EXIT_OK, new TraceSummary().run(new String[] {file.toString()}, ctx));
    assertEquals("", err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void badArgumentsAreRefused(@TempDir Path dir) throws IOException {
    Path file = workloadTrace(dir, 2);
    // The gap report of the reference burst is a benchmark tool's (jperfetto-tools gaps), not the product's.
    assertEquals(Jperfetto.EXIT_ERROR, new TraceSummary().run(new String[] {"--gaps=2", file.toString()}, ctx));
    assertEquals(Jperfetto.EXIT_ERROR, new TraceSummary().run(new String[] {"--bogus", file.toString()}, ctx));
    assertEquals(Jperfetto.EXIT_ERROR, new TraceSummary().run(new String[] {}, ctx));
    assertEquals(Jperfetto.EXIT_ERROR,
        new TraceSummary().run(new String[] {file.toString(), file.toString()}, ctx));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: jperfetto summary FILE"));
  }
}
