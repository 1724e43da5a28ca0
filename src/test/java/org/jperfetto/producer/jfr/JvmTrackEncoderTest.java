package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.producer.jfr.JvmEvent.Arg;
import org.jperfetto.producer.jfr.JvmEvent.Counter;
import org.jperfetto.producer.jfr.JvmEvent.Lane;
import org.jperfetto.producer.jfr.JvmEvent.Slice;
import org.jperfetto.producer.proto.PatchList;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.producer.proto.ScatteredStreamWriter;
import org.jperfetto.producer.proto.TrackUuids;
import org.jperfetto.protos.CounterDescriptor;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;
import org.junit.jupiter.api.Test;

class JvmTrackEncoderTest {
  static final long EPOCH = 1_700_000_000_000_000_000L;

  /** Packets written into a heap buffer, one at a time, read back with protobuf-java. */
  static final class HeapPackets implements JvmTrackEncoder.PacketStarter {
    final List<TracePacket> packets = new ArrayList<>();
    private final MemorySegment buffer = MemorySegment.ofArray(new byte[1 << 16]);
    private final ScatteredStreamWriter stream = new ScatteredStreamWriter(w -> {
      throw new IllegalStateException("packet over 64 KiB");
    });
    private final ProtoWriter writer = new ProtoWriter(stream, new PatchList());
    private boolean open;

    @Override
    public ProtoWriter newTracePacket() {
      finish();
      stream.reset(buffer, 0, buffer.byteSize());
      writer.reset();
      open = true;
      return writer;
    }

    List<TracePacket> finish() {
      if (open) {
        writer.endAllNested();
        try {
          packets.add(TracePacket.parseFrom(
              buffer.asSlice(0, stream.writePtr()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
        open = false;
      }
      return packets;
    }
  }

  static JfrClock clock() {
    JfrClock c = new JfrClock();
    c.mark(EPOCH + 1_000, 900, 900); // offset EPOCH + 100
    return c;
  }

  @Test
  void aSliceIsOnALaneUnderItsThreadsOwnTrackThenBeginAndEnd() {
    JvmTrackEncoder enc = new JvmTrackEncoder(42);
    HeapPackets out = new HeapPackets();
    Lane lane = new Lane(1234, "worker-1", "Locks");
    enc.write(new Slice(EPOCH + 5_000, 777, lane, "jvm.locks", "Park",
        List.of(new Arg("timeout", 5L), new Arg("ratio", 0.5), new Arg("timedOut", true), new Arg("cls", "Foo")),
        List.of("a.B.c:1", "...")), clock(), out);
    List<TracePacket> all = out.finish();
    assertEquals(5, all.size());
    TrackDescriptor process = all.get(0).getTrackDescriptor();
    assertEquals(TrackUuids.process(42), process.getUuid());
    assertEquals(42, process.getProcess().getPid());
    // The thread's own track, exactly as TrackEvent describes it (one uuid per tid, or
    // trace_processor starts a new thread), then the lane as its child.
    TrackDescriptor thread = all.get(1).getTrackDescriptor();
    assertEquals(TrackUuids.thread(TrackUuids.process(42), 1234), thread.getUuid());
    assertEquals(process.getUuid(), thread.getParentUuid());
    assertEquals(42, thread.getThread().getPid());
    assertEquals(1234, thread.getThread().getTid());
    assertEquals("worker-1", thread.getThread().getThreadName());
    TrackDescriptor d = all.get(2).getTrackDescriptor();
    assertEquals(enc.laneUuid(lane), d.getUuid());
    assertEquals("Locks", d.getName());
    assertEquals(thread.getUuid(), d.getParentUuid());
    assertFalse(d.hasThread());
    List<TracePacket> p = all.subList(2, 5);
    TrackEvent begin = p.get(1).getTrackEvent();
    assertEquals(TrackEvent.Type.TYPE_SLICE_BEGIN, begin.getType());
    assertEquals(4_900, p.get(1).getTimestamp());
    assertEquals(3, p.get(1).getTimestampClockId());
    assertEquals(d.getUuid(), begin.getTrackUuid());
    assertEquals("Park", begin.getName());
    assertEquals(List.of("jvm.locks"), begin.getCategoriesList());
    assertEquals(5, begin.getDebugAnnotations(0).getIntValue());
    assertEquals(0.5, begin.getDebugAnnotations(1).getDoubleValue());
    assertTrue(begin.getDebugAnnotations(2).getBoolValue());
    assertEquals("Foo", begin.getDebugAnnotations(3).getStringValue());
    assertEquals("stack", begin.getDebugAnnotations(4).getName());
    assertEquals("a.B.c:1\n...", begin.getDebugAnnotations(4).getStringValue());
    assertEquals(TrackEvent.Type.TYPE_SLICE_END, p.get(2).getTrackEvent().getType());
    assertEquals(4_900 + 777, p.get(2).getTimestamp());
  }

  @Test
  void descriptorsOncePerSequenceAndAgainAfterAClear() {
    JvmTrackEncoder enc = new JvmTrackEncoder(42);
    HeapPackets out = new HeapPackets();
    Lane lane = new Lane(7, "t", "GC");
    Slice s = new Slice(EPOCH + 5_000, 1, lane, "jvm.gc", "G1New", List.of(), List.of());
    enc.write(s, clock(), out);
    enc.write(s, clock(), out);
    assertEquals(3, out.finish().stream().filter(TracePacket::hasTrackDescriptor).count(), "process, thread, lane");
    enc.clearIncrementalState();
    enc.write(s, clock(), out);
    assertEquals(6, out.finish().stream().filter(TracePacket::hasTrackDescriptor).count());
  }

  @Test
  void countersAndProcessLanesHangOffTheProcessTrack() {
    JvmTrackEncoder enc = new JvmTrackEncoder(42);
    HeapPackets out = new HeapPackets();
    enc.write(new Counter(EPOCH + 2_000, "JVM heap used", "bytes", 1_048_576), clock(), out);
    enc.write(new Counter(EPOCH + 3_000, "JVM CPU user", "%", 12.5), clock(), out);
    enc.write(new JvmEvent.Instant(EPOCH + 4_000, new Lane(0, "", "Virtual threads"), "jvm.vthreads",
        "Virtual thread submit failed", List.of(), List.of()), clock(), out);
    List<TracePacket> p = out.finish();
    TrackDescriptor process = p.get(0).getTrackDescriptor();
    assertEquals(42, process.getProcess().getPid());
    assertEquals(enc.processUuid(), process.getUuid());
    TrackDescriptor heap = p.get(1).getTrackDescriptor();
    assertEquals("JVM heap used", heap.getName());
    assertEquals(enc.processUuid(), heap.getParentUuid());
    assertEquals(CounterDescriptor.Unit.UNIT_SIZE_BYTES, heap.getCounter().getUnit());
    assertEquals(1_048_576, p.get(2).getTrackEvent().getCounterValue());
    assertEquals(1_900, p.get(2).getTimestamp());
    assertEquals("%", p.get(3).getTrackDescriptor().getCounter().getUnitName());
    assertEquals(12.5, p.get(4).getTrackEvent().getDoubleCounterValue());
    TrackDescriptor vlane = p.get(5).getTrackDescriptor();
    assertFalse(vlane.hasThread());
    assertEquals(enc.processUuid(), vlane.getParentUuid());
    assertEquals(TrackEvent.Type.TYPE_INSTANT, p.get(6).getTrackEvent().getType());
    assertEquals(7, p.size(), "the process is described once");
  }

  @Test
  void uuidsDifferByPidTidAndLane() {
    JvmTrackEncoder a = new JvmTrackEncoder(1);
    JvmTrackEncoder b = new JvmTrackEncoder(2);
    Lane gc = new Lane(10, "", "GC");
    assertNotEquals(a.laneUuid(gc), b.laneUuid(gc));
    assertNotEquals(a.laneUuid(gc), a.laneUuid(new Lane(11, "", "GC")));
    assertNotEquals(a.laneUuid(gc), a.laneUuid(new Lane(10, "", "Locks")));
    assertEquals(a.laneUuid(gc), a.laneUuid(new Lane(10, "renamed", "GC")), "the thread name is not part of it");
  }
}
