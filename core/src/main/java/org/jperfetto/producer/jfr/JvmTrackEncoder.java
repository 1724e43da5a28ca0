package org.jperfetto.producer.jfr;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jperfetto.producer.jfr.JvmEvent.Arg;
import org.jperfetto.producer.jfr.JvmEvent.Counter;
import org.jperfetto.producer.jfr.JvmEvent.Lane;
import org.jperfetto.producer.jfr.JvmEvent.Slice;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.producer.proto.TrackUuids;
import org.jperfetto.protos.BuiltinClock;
import org.jperfetto.protos.CounterDescriptor;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.ProcessDescriptor;
import org.jperfetto.protos.ThreadDescriptor;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/**
 * Writes {@link JvmEvent}s as TrackEvent packets: names and categories inline (no interning, so
 * nothing depends on incremental state but the track descriptors), timestamps on CLOCK_MONOTONIC
 * declared per packet. Each track gets its TrackDescriptor before its first event, and again after
 * {@link #clearIncrementalState} (a ring buffer may have overwritten the first one):
 * <ul>
 *   <li>a lane of a thread: a child of the thread's own track, named after the lane; the thread's
 *       and the process's tracks have the uuids every data source of the process gives them
 *       ({@link TrackUuids}), so trace_processor keeps one thread and one process, with the app's
 *       own tracks and the kernel's;
 *   <li>a lane of the process, and counter tracks: children of the process track.
 * </ul>
 * One encoder per writer (sequence); not thread-safe.
 */
final class JvmTrackEncoder {
  /** Opens the next TracePacket (a TraceContext's newTracePacket). */
  @FunctionalInterface
  public interface PacketStarter {
    /** Starts a new TracePacket and returns its writer. */
    ProtoWriter newTracePacket();
  }

  private static final int CLOCK_MONOTONIC = BuiltinClock.BUILTIN_CLOCK_MONOTONIC_VALUE;
  private static final String STACK_ANNOTATION = "stack";

  private final int pid;
  private final long processUuid;
  private final Set<Long> described = new HashSet<>();

  /** An encoder for the tracks of process pid. */
  public JvmTrackEncoder(int pid) {
    this.pid = pid;
    this.processUuid = TrackUuids.process(pid);
  }

  /** Forget which tracks were described; the next events describe them again. */
  public void clearIncrementalState() {
    described.clear();
  }

  /** Writes e (its descriptors first if needed); times go through clock. */
  public void write(JvmEvent e, JfrClock clock, PacketStarter out) {
    write(e, clock, out, 0, null);
  }

  /**
   * Writes e as {@link #write(JvmEvent, JfrClock, PacketStarter)} does; an instant with
   * callstackIid (not 0) refers to that interned callstack, and its packet gets the interned
   * entries internedData writes and SEQ_NEEDS_INCREMENTAL_STATE.
   */
  public void write(JvmEvent e, JfrClock clock, PacketStarter out, long callstackIid,
      java.util.function.Consumer<ProtoWriter> internedData) {
    switch (e) {
      case Slice s -> {
        long track = laneTrack(s.lane(), out);
        long begin = clock.toTrace(s.epochNanos());
        event(out, begin, TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE, track, s.category(), s.name(), s.args(), s.stack());
        event(out, begin + s.durationNanos(), TrackEvent.Type.TYPE_SLICE_END_VALUE, track, null, null,
            List.of(), List.of());
      }
      case JvmEvent.Instant i -> {
        long track = laneTrack(i.lane(), out);
        ProtoWriter p = timed(out, clock.toTrace(i.epochNanos()));
        if (callstackIid != 0) {
          p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER,
              TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE);
          internedData.accept(p);
        }
        trackEvent(p, TrackEvent.Type.TYPE_INSTANT_VALUE, track, i.category(), i.name(), i.args(), i.stack(),
            callstackIid);
      }
      case Counter c -> {
        long track = counterTrack(c, out);
        ProtoWriter p = timed(out, clock.toTrace(c.epochNanos()));
        p.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
        p.appendVarInt(TrackEvent.TYPE_FIELD_NUMBER, TrackEvent.Type.TYPE_COUNTER_VALUE);
        p.appendVarInt(TrackEvent.TRACK_UUID_FIELD_NUMBER, track);
        double v = c.value();
        if (v == Math.rint(v) && Math.abs(v) < 0x1p53 && !"%".equals(c.unit())) {
          p.appendVarInt(TrackEvent.COUNTER_VALUE_FIELD_NUMBER, (long) v);
        } else {
          p.appendDouble(TrackEvent.DOUBLE_COUNTER_VALUE_FIELD_NUMBER, v);
        }
        p.endNested();
      }
    }
  }

  /** The uuid of a lane's track (thread lanes by tid, process lanes by name). */
  public long laneUuid(Lane lane) {
    return uuid("lane", lane.tid(), lane.lane());
  }

  /** The uuid of the counter track called name. */
  public long counterUuid(String name) {
    return uuid("counter", 0, name);
  }

  /** The uuid of the process track the JVM's tracks hang under. */
  public long processUuid() {
    return processUuid;
  }

  private void event(PacketStarter out, long ts, int type, long track, String category, String name,
      List<Arg> args, List<String> stack) {
    trackEvent(timed(out, ts), type, track, category, name, args, stack, 0);
  }

  private void trackEvent(ProtoWriter p, int type, long track, String category, String name,
      List<Arg> args, List<String> stack, long callstackIid) {
    p.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
    p.appendVarInt(TrackEvent.TYPE_FIELD_NUMBER, type);
    p.appendVarInt(TrackEvent.TRACK_UUID_FIELD_NUMBER, track);
    if (category != null) {
      p.appendString(TrackEvent.CATEGORIES_FIELD_NUMBER, category);
    }
    if (name != null) {
      p.appendString(TrackEvent.NAME_FIELD_NUMBER, name);
    }
    for (Arg a : args) {
      p.beginNested(TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER);
      p.appendString(DebugAnnotation.NAME_FIELD_NUMBER, a.name());
      switch (a.value()) {
        case Long l -> p.appendVarInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, l);
        case Double d -> p.appendDouble(DebugAnnotation.DOUBLE_VALUE_FIELD_NUMBER, d);
        case Boolean b -> p.appendBool(DebugAnnotation.BOOL_VALUE_FIELD_NUMBER, b);
        case String s -> p.appendString(DebugAnnotation.STRING_VALUE_FIELD_NUMBER, s);
        default -> throw new IllegalStateException("unsupported annotation value: " + a);
      }
      p.endNested();
    }
    if (!stack.isEmpty()) {
      p.beginNested(TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER);
      p.appendString(DebugAnnotation.NAME_FIELD_NUMBER, STACK_ANNOTATION);
      p.appendString(DebugAnnotation.STRING_VALUE_FIELD_NUMBER, String.join("\n", stack));
      p.endNested();
    }
    if (callstackIid != 0) {
      p.appendVarInt(TrackEvent.CALLSTACK_IID_FIELD_NUMBER, callstackIid);
    }
    p.endNested();
  }

  private static ProtoWriter timed(PacketStarter out, long ts) {
    ProtoWriter p = out.newTracePacket();
    p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
    p.appendVarInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_MONOTONIC);
    return p;
  }

  private long laneTrack(Lane lane, PacketStarter out) {
    long uuid = laneUuid(lane);
    long parent = lane.isThread() ? describeThread(out, lane.tid(), lane.threadName()) : describeProcess(out);
    ProtoWriter p = newDescriptor(out, uuid, parent);
    if (p != null) {
      p.appendString(TrackDescriptor.NAME_FIELD_NUMBER, lane.isThread() ? lane.lane() : "JVM " + lane.lane());
      p.endNested();
    }
    return uuid;
  }

  /**
   * Describes thread tid's own track (once per sequence state) as every data source of the process
   * describes it: the uuid {@link TrackUuids#thread}, the process track as parent, pid, tid and, if
   * known, the name. Returns its uuid.
   */
  public long describeThread(PacketStarter out, long tid, String name) {
    long uuid = TrackUuids.thread(processUuid, tid);
    ProtoWriter p = newDescriptor(out, uuid, describeProcess(out));
    if (p != null) {
      p.beginNested(TrackDescriptor.THREAD_FIELD_NUMBER);
      p.appendVarInt(ThreadDescriptor.PID_FIELD_NUMBER, pid);
      p.appendVarInt(ThreadDescriptor.TID_FIELD_NUMBER, tid);
      if (name != null && !name.isEmpty()) {
        p.appendString(ThreadDescriptor.THREAD_NAME_FIELD_NUMBER, name);
      }
      p.endNested();
      p.endNested();
    }
    return uuid;
  }

  private long counterTrack(Counter c, PacketStarter out) {
    long uuid = counterUuid(c.track());
    ProtoWriter p = newDescriptor(out, uuid, describeProcess(out));
    if (p != null) {
      p.appendString(TrackDescriptor.NAME_FIELD_NUMBER, c.track());
      p.beginNested(TrackDescriptor.COUNTER_FIELD_NUMBER);
      switch (c.unit()) {
        case "bytes" -> p.appendVarInt(CounterDescriptor.UNIT_FIELD_NUMBER,
            CounterDescriptor.Unit.UNIT_SIZE_BYTES_VALUE);
        case "count" -> p.appendVarInt(CounterDescriptor.UNIT_FIELD_NUMBER, CounterDescriptor.Unit.UNIT_COUNT_VALUE);
        default -> p.appendString(CounterDescriptor.UNIT_NAME_FIELD_NUMBER, c.unit());
      }
      p.endNested();
      p.endNested();
    }
    return uuid;
  }

  /** Describes the process track (once per sequence state); returns its uuid. */
  private long describeProcess(PacketStarter out) {
    ProtoWriter p = newDescriptor(out, processUuid, 0);
    if (p != null) {
      p.beginNested(TrackDescriptor.PROCESS_FIELD_NUMBER);
      p.appendVarInt(ProcessDescriptor.PID_FIELD_NUMBER, pid);
      p.endNested();
      p.endNested();
    }
    return processUuid;
  }

  /**
   * Opens the descriptor of track uuid (its parent's uuid set unless 0) when this sequence state has
   * not described it yet; the caller adds the rest and closes it with {@code endNested()}. Null when
   * it is described already.
   */
  private ProtoWriter newDescriptor(PacketStarter out, long uuid, long parent) {
    if (!described.add(uuid)) {
      return null;
    }
    ProtoWriter p = out.newTracePacket();
    p.beginNested(TracePacket.TRACK_DESCRIPTOR_FIELD_NUMBER);
    p.appendVarInt(TrackDescriptor.UUID_FIELD_NUMBER, uuid);
    if (parent != 0) {
      p.appendVarInt(TrackDescriptor.PARENT_UUID_FIELD_NUMBER, parent);
    }
    return p;
  }

  /** A stable 64-bit id from the pid, a kind, a tid and a name (FNV-1a, then a 64-bit mix). */
  private long uuid(String kind, long tid, String name) {
    long h = 0xcbf29ce484222325L;
    h = fnv(h, "jvm.jfr/" + kind + "/" + pid + "/" + tid + "/" + name);
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return h == 0 ? 1 : h;
  }

  private static long fnv(long h, String s) {
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001b3L;
    }
    return h;
  }
}
