package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jperfetto.protos.Callstack;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.CounterDescriptor;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.EventName;
import org.jperfetto.protos.Frame;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.InternedString;
import org.jperfetto.protos.StackSample;
import org.jperfetto.protos.ThreadDescriptor;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracePacketDefaults;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;
import org.jperfetto.protos.TrackEventDefaults;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceViewTest {
  private static final int CLEARED = TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE;
  private static final int NEEDS = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;
  private static final long MS = 1_000_000;
  private static final long THREAD = 10;
  private static final long GC_LANE = 11;
  private static final long HEAP = 12;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]),
      new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
      Map.of(), false);

  private static TracePacket.Builder on(int seq, long ts) {
    return TracePacket.newBuilder().setTrustedPacketSequenceId(seq).setTimestamp(ts).setSequenceFlags(NEEDS);
  }

  private static TracePacket slice(int seq, long ts, TrackEvent.Type type, long nameIid, long track) {
    TrackEvent.Builder e = TrackEvent.newBuilder().setType(type).setTrackUuid(track);
    if (type == TrackEvent.Type.TYPE_SLICE_BEGIN) {
      e.setNameIid(nameIid).addCategoryIids(1);
    }
    return on(seq, ts).setTrackEvent(e).build();
  }

  /**
   * A thread "worker" (tid 7) with request (10 ms, holding parse 4 ms) and request (20 ms); a GC
   * lane under it with a 5 ms G1 pause; a heap counter; three stack samples (two in Work.hot); a
   * ring-wrapped sequence 2 whose interned state is gone; a service stats packet with overwritten
   * chunks.
   */
  private static Path trace(Path dir) throws IOException {
    Trace.Builder t = Trace.newBuilder();
    t.addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(1).setSequenceFlags(CLEARED)
        .setTracePacketDefaults(TracePacketDefaults.newBuilder().setTimestampClockId(6)
            .setTrackEventDefaults(TrackEventDefaults.newBuilder().setTrackUuid(THREAD)))
        .setInternedData(InternedData.newBuilder()
            .addEventCategories(org.jperfetto.protos.EventCategory.newBuilder().setIid(1).setName("app"))
            .addEventNames(EventName.newBuilder().setIid(1).setName("request"))
            .addEventNames(EventName.newBuilder().setIid(2).setName("parse"))
            .addFunctionNames(InternedString.newBuilder().setIid(1).setStr(ByteString.copyFromUtf8("Work.run")))
            .addFunctionNames(InternedString.newBuilder().setIid(2).setStr(ByteString.copyFromUtf8("Work.hot")))
            .addFrames(Frame.newBuilder().setIid(1).setFunctionNameId(1))
            .addFrames(Frame.newBuilder().setIid(2).setFunctionNameId(2))
            .addCallstacks(Callstack.newBuilder().setIid(1).addFrameIds(1).addFrameIds(2))
            .addCallstacks(Callstack.newBuilder().setIid(2).addFrameIds(1))));
    t.addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(1).setTrackDescriptor(TrackDescriptor
        .newBuilder().setUuid(THREAD).setThread(ThreadDescriptor.newBuilder().setPid(5).setTid(7)
            .setThreadName("worker"))).build());
    t.addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(1).setTrackDescriptor(TrackDescriptor
        .newBuilder().setUuid(GC_LANE).setParentUuid(THREAD).setName("GC")).build());
    t.addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(1).setTrackDescriptor(TrackDescriptor
        .newBuilder().setUuid(HEAP).setStaticName("JVM heap used")
        .setCounter(CounterDescriptor.newBuilder().setUnitName("bytes"))).build());
    t.addPacket(slice(1, 100 * MS, TrackEvent.Type.TYPE_SLICE_BEGIN, 1, THREAD));
    t.addPacket(slice(1, 102 * MS, TrackEvent.Type.TYPE_SLICE_BEGIN, 2, THREAD));
    t.addPacket(slice(1, 106 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, THREAD));
    t.addPacket(slice(1, 110 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, THREAD));
    t.addPacket(slice(1, 200 * MS, TrackEvent.Type.TYPE_SLICE_BEGIN, 1, THREAD));
    t.addPacket(slice(1, 220 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, THREAD));
    // A concurrent collection: 5 ms of slice, 3 ms of it pauses (the longest 2 ms), with a pause
    // phase nested in it that does not count again.
    t.addPacket(on(1, 300 * MS).setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN)
        .setTrackUuid(GC_LANE).addCategories("jvm.gc").setName("G1Old")
        .addDebugAnnotations(DebugAnnotation.newBuilder().setName("sumOfPauses").setIntValue(3 * MS))
        .addDebugAnnotations(DebugAnnotation.newBuilder().setName("longestPause").setIntValue(2 * MS))).build());
    t.addPacket(on(1, 301 * MS).setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN)
        .setTrackUuid(GC_LANE).addCategories("jvm.gc").setName("GC Pause")).build());
    t.addPacket(slice(1, 303 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, GC_LANE));
    t.addPacket(slice(1, 305 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, GC_LANE));
    for (long v : new long[] {300, 100, 200}) {
      t.addPacket(on(1, 310 * MS).setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_COUNTER)
          .setTrackUuid(HEAP).setCounterValue(v)).build());
    }
    for (long stack : new long[] {1, 1, 2}) {
      t.addPacket(on(1, 320 * MS).setStackSample(StackSample.newBuilder().setCallstackIid(stack)
          .setTaskContext(StackSample.TaskContext.newBuilder().setPid(5).setTid(7))).build());
    }
    // Sequence 2 lost the packets that set its state (a ring that wrapped): trace_processor skips it.
    t.addPacket(slice(2, 400 * MS, TrackEvent.Type.TYPE_SLICE_BEGIN, 1, THREAD));
    t.addPacket(slice(2, 401 * MS, TrackEvent.Type.TYPE_SLICE_END, 0, THREAD));
    t.addPacket(TracePacket.newBuilder().setTrustedPacketSequenceId(3).setTraceStats(TraceStats.newBuilder()
        .addBufferStats(TraceStats.BufferStats.newBuilder().setChunksOverwritten(4))));
    Path file = dir.resolve("t.pftrace");
    Files.write(file, t.build().toByteArray());
    return file;
  }

  private String run(String... args) throws IOException {
    assertEquals(Jperfetto.EXIT_OK, new TraceView().run(args, ctx), err.toString(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void slicesThreadsGcCountersSamplesAndLossesInWords(@TempDir Path dir) throws IOException {
    String view = run(trace(dir).toString());
    assertTrue(view.startsWith("t.pftrace: "), view);
    assertTrue(view.contains("220.00 ms of events"), view);
    assertTrue(view.contains("(2 packets left out: trace_processor cannot read them either"), view);
    assertTrue(view.contains("Slices: 5, 4 names; 0 instants"), view);
    assertTrue(row(view, "request").matches(" +2 +30.00 ms +20.00 ms +15.00 ms"), row(view, "request"));
    assertTrue(row(view, "parse").matches(" +1 +4.00 ms +4.00 ms +4.00 ms"), row(view, "parse"));
    // The outermost time is the thread's own track's (30 ms), not its lanes'; the GC slice counts.
    assertTrue(row(view, "worker (7)").matches(" +5 +30.00 ms +3"), row(view, "worker (7)"));
    assertTrue(view.contains("GC: 1 collections, paused 3.00 ms in all, longest pause 2.00 ms"), view);
    String gc = view.substring(view.indexOf("GC: "));
    assertTrue(row(gc, "G1Old").matches(" +1 +3.00 ms +2.00 ms"), row(gc, "G1Old"));
    assertTrue(row(gc, "GC Pause") == null, "a pause phase is not a collection: " + gc);
    assertTrue(row(view, "JVM heap used (bytes)").matches(" +3 +100 +300 +200"), row(view, "JVM heap used (bytes)"));
    assertTrue(view.contains("Stack samples: 3;"), view);
    assertTrue(row(view, "Work.hot").matches(" +2 +66.7 %"), row(view, "Work.hot"));
    assertTrue(row(view, "Work.run").matches(" +1 +33.3 %"), row(view, "Work.run"));
    assertTrue(view.contains("The ring buffer wrapped: 4 chunks of the oldest data were overwritten"), view);
    assertTrue(view.contains("1 of 6 slice begins are in the file but trace_processor cannot read them"), view);
    assertFalse(view.contains("No data was lost."), view);
  }

  @Test
  void topCutsTablesAndSaysHowManyMore(@TempDir Path dir) throws IOException {
    String view = run("--top", "1", trace(dir).toString());
    assertTrue(row(view, "request") != null && row(view, "parse") == null, view);
    assertTrue(view.contains("... 1 more (--top N shows more)"), view);
  }

  @Test
  void aCleanTraceSaysNothingWasLost(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("empty.pftrace");
    Files.write(file, Trace.newBuilder().addPacket(TracePacket.newBuilder().setClockSnapshot(
        ClockSnapshot.newBuilder().addClocks(ClockSnapshot.Clock.newBuilder().setClockId(6).setTimestamp(1))))
        .build().toByteArray());
    assertTrue(run(file.toString()).contains("Losses\n  No data was lost."), out.toString(StandardCharsets.UTF_8));
  }

  @Test
  void badArgumentsSayWhatIsExpected(@TempDir Path dir) throws IOException {
    assertEquals(Jperfetto.EXIT_ERROR, new TraceView().run(new String[] {"--top", "x", "f"}, ctx));
    assertEquals(Jperfetto.EXIT_ERROR, new TraceView().run(new String[] {dir.resolve("nope").toString()}, ctx));
    assertEquals(Jperfetto.EXIT_ERROR, new TraceView().run(new String[] {}, ctx));
    String e = err.toString(StandardCharsets.UTF_8);
    assertTrue(e.contains("--top takes a positive count of rows"), e);
    assertTrue(e.contains("no such trace file"), e);
    assertTrue(e.contains("usage: jperfetto view [--top N] FILE"), e);
  }

  /** What follows a table row's name, or null when no row has it. */
  private static String row(String view, String name) {
    for (String line : view.split("\n")) {
      String trimmed = line.stripLeading();
      if (trimmed.startsWith(name + " ")) {
        return trimmed.substring(name.length()).stripTrailing();
      }
    }
    return null;
  }
}
