package org.jperfetto.micrometer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/**
 * A trace file's TrackEvents read back as trace_processor reads them, for assertions: per sequence,
 * interned names resolved (an error if used before being defined), delta timestamps on the
 * incremental clock made absolute, the default track from trace_packet_defaults; track descriptors
 * by uuid. Debug annotations are read as flat values (the handler writes no dictionaries).
 */
final class RecordedTrace {
  /** One TrackEvent, resolved. Args map names to Long, Double, Boolean or String. */
  record Event(TrackEvent.Type type, List<String> categories, String name, long track, long timestamp,
      Map<String, Object> args, List<Long> flows, List<Long> terminatingFlows) {}

  final List<Event> events = new ArrayList<>();
  final Map<Long, TrackDescriptor> tracks = new LinkedHashMap<>();
  final List<String> errors = new ArrayList<>();

  private static final class Sequence {
    final Map<Long, String> categories = new HashMap<>();
    final Map<Long, String> names = new HashMap<>();
    final Map<Long, String> argNames = new HashMap<>();
    long defaultTrack;
    int clockId;
    long clock;
  }

  private final Map<Integer, Sequence> sequences = new HashMap<>();

  static RecordedTrace of(byte[] trace) throws Exception {
    return of(Trace.parseFrom(trace).getPacketList());
  }

  static RecordedTrace of(List<TracePacket> packets) {
    RecordedTrace t = new RecordedTrace();
    packets.forEach(t::add);
    return t;
  }

  private void add(TracePacket p) {
    int id = p.getTrustedPacketSequenceId();
    if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
      sequences.put(id, new Sequence());
    }
    Sequence s = sequences.get(id);
    if (s == null) {
      if (p.hasTrackEvent()) {
        errors.add("a track event before its sequence's state was set: seq=" + id);
      }
      return;
    }
    if (p.hasTracePacketDefaults()) {
      s.clockId = p.getTracePacketDefaults().getTimestampClockId();
      s.defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
    }
    if (p.hasClockSnapshot()) {
      for (ClockSnapshot.Clock c : p.getClockSnapshot().getClocksList()) {
        if (c.getIsIncremental()) {
          s.clock = c.getTimestamp();
        }
      }
    }
    long ts = p.getTimestamp();
    if (p.hasTimestamp() && !p.hasTimestampClockId() && s.clockId >= 64) {
      s.clock += p.getTimestamp();
      ts = s.clock;
    }
    if (p.hasInternedData()) {
      InternedData d = p.getInternedData();
      d.getEventCategoriesList().forEach(c -> s.categories.put(c.getIid(), c.getName()));
      d.getEventNamesList().forEach(c -> s.names.put(c.getIid(), c.getName()));
      d.getDebugAnnotationNamesList().forEach(c -> s.argNames.put(c.getIid(), c.getName()));
    }
    if (p.hasTrackDescriptor()) {
      tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
    }
    if (!p.hasTrackEvent()) {
      return;
    }
    TrackEvent e = p.getTrackEvent();
    List<String> categories = new ArrayList<>(e.getCategoriesList());
    e.getCategoryIidsList().forEach(iid -> categories.add(resolve(s.categories, iid, id)));
    String name = e.hasNameIid() ? resolve(s.names, e.getNameIid(), id) : e.hasName() ? e.getName() : null;
    Map<String, Object> args = new LinkedHashMap<>();
    for (DebugAnnotation a : e.getDebugAnnotationsList()) {
      args.put(a.hasNameIid() ? resolve(s.argNames, a.getNameIid(), id) : a.getName(),
          a.hasIntValue() ? (Object) a.getIntValue() : a.hasBoolValue() ? (Object) a.getBoolValue()
          : a.hasDoubleValue() ? (Object) a.getDoubleValue() : a.getStringValue());
    }
    events.add(new Event(e.getType(), categories, name, e.hasTrackUuid() ? e.getTrackUuid() : s.defaultTrack, ts,
        args, e.getFlowIdsList(), e.getTerminatingFlowIdsList()));
  }

  private String resolve(Map<Long, String> table, long iid, int sequence) {
    String v = table.get(iid);
    if (v == null) {
      errors.add("unknown iid " + iid + " on seq " + sequence);
    }
    return v;
  }

  /** Events named name, in the order written. */
  List<Event> named(String name) {
    return events.stream().filter(e -> name.equals(e.name())).toList();
  }

  /** The one slice begin named name. */
  Event begin(String name) {
    List<Event> found = events.stream().filter(e -> name.equals(e.name())
        && e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN).toList();
    if (found.size() != 1) {
      throw new AssertionError("slice begins named " + name + ": " + found.size() + " in " + events);
    }
    return found.get(0);
  }

  /**
   * The end matching begin: on its track, the first end after it (by time, then by order written)
   * that leaves no slice begun after it open, as trace_processor pairs them.
   */
  Event endOf(Event begin) {
    List<Event> onTrack = new ArrayList<>(events.stream().filter(e -> e.track() == begin.track()
        && (e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN || e.type() == TrackEvent.Type.TYPE_SLICE_END)).toList());
    onTrack.sort((a, b) -> Long.compare(a.timestamp(), b.timestamp())); // stable: equal times keep their order
    int depth = 0;
    for (Event e : onTrack.subList(onTrack.indexOf(begin) + 1, onTrack.size())) {
      if (e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN) {
        depth++;
      } else if (depth-- == 0) {
        return e;
      }
    }
    throw new AssertionError("no end for " + begin);
  }

  /** The name of track uuid's descriptor (a thread's track has its thread's name). */
  String trackName(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    if (d == null) {
      return null;
    }
    return d.hasThread() ? d.getThread().getThreadName() : d.hasStaticName() ? d.getStaticName() : d.getName();
  }
}
