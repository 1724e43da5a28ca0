package org.jperfetto.opentelemetry;

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
 * The TrackEvents of a trace with their interned names resolved and their timestamps made absolute
 * (on CLOCK_MONOTONIC, System.nanoTime()'s clock), per sequence as trace_processor reads them.
 */
public final class TraceEvents {
  private static final int INCREMENTAL_CLOCK = 64;

  /** One event: args map names to Long, Double, Boolean, String or List. */
  public record Event(TrackEvent.Type type, String name, long track, long timestamp, Map<String, Object> args,
      List<Long> flows) {}

  public final List<Event> events = new ArrayList<>();
  final Map<Long, TrackDescriptor> tracks = new LinkedHashMap<>();

  private static final class Sequence {
    final Map<Long, String> names = new HashMap<>();
    final Map<Long, String> argNames = new HashMap<>();
    long defaultTrack;
    long clock;
  }

  public static TraceEvents of(byte[] trace) throws Exception {
    TraceEvents t = new TraceEvents();
    Map<Integer, Sequence> sequences = new HashMap<>();
    for (TracePacket p : Trace.parseFrom(trace).getPacketList()) {
      Sequence s = sequences.computeIfAbsent(p.getTrustedPacketSequenceId(), k -> new Sequence());
      if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
        s.names.clear();
        s.argNames.clear();
      }
      if (p.hasTracePacketDefaults()) {
        s.defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
      }
      for (ClockSnapshot.Clock c : p.getClockSnapshot().getClocksList()) {
        if (c.getClockId() == INCREMENTAL_CLOCK) {
          s.clock = c.getTimestamp();
        }
      }
      InternedData interned = p.getInternedData();
      interned.getEventNamesList().forEach(n -> s.names.put(n.getIid(), n.getName()));
      interned.getDebugAnnotationNamesList().forEach(n -> s.argNames.put(n.getIid(), n.getName()));
      if (p.hasTrackDescriptor()) {
        t.tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
      }
      if (!p.hasTrackEvent()) {
        continue;
      }
      long ts;
      if (p.hasTimestampClockId() && p.getTimestampClockId() != INCREMENTAL_CLOCK) {
        ts = p.getTimestamp();
      } else {
        s.clock += p.getTimestamp();
        ts = s.clock;
      }
      TrackEvent e = p.getTrackEvent();
      String name = e.hasNameIid() ? s.names.get(e.getNameIid()) : e.hasName() ? e.getName() : null;
      Map<String, Object> args = new LinkedHashMap<>();
      for (DebugAnnotation a : e.getDebugAnnotationsList()) {
        args.put(a.hasNameIid() ? s.argNames.get(a.getNameIid()) : a.getName(), value(a));
      }
      t.events.add(new Event(e.getType(), name, e.hasTrackUuid() ? e.getTrackUuid() : s.defaultTrack, ts, args,
          e.getFlowIdsList()));
    }
    return t;
  }

  private static Object value(DebugAnnotation a) {
    if (a.hasIntValue()) {
      return a.getIntValue();
    } else if (a.hasDoubleValue()) {
      return a.getDoubleValue();
    } else if (a.hasBoolValue()) {
      return a.getBoolValue();
    } else if (a.hasStringValue()) {
      return a.getStringValue();
    }
    List<Object> list = new ArrayList<>();
    a.getArrayValuesList().forEach(v -> list.add(value(v)));
    return list;
  }

  /** The slice begins and instants named name. */
  List<Event> named(String name) {
    return events.stream().filter(e -> name.equals(e.name())).toList();
  }

  /** The one slice begin named name. */
  Event begin(String name) {
    List<Event> l = named(name).stream().filter(e -> e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN).toList();
    if (l.size() != 1) {
      throw new AssertionError("slice begins named " + name + ": " + l.size());
    }
    return l.get(0);
  }

  /** The timestamp of the end that closes begin (the next end on its track after it, nesting counted). */
  public long endOf(Event begin) {
    List<Event> onTrack = events.stream().filter(e -> e.track() == begin.track()
        && e.type() != TrackEvent.Type.TYPE_INSTANT)
        .sorted(java.util.Comparator.comparingLong(Event::timestamp)).toList();
    int depth = 0;
    boolean inside = false;
    for (Event e : onTrack) {
      if (e == begin) {
        inside = true;
      }
      if (!inside) {
        continue;
      }
      depth += e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN ? 1 : -1;
      if (depth == 0) {
        return e.timestamp();
      }
    }
    throw new AssertionError("no end for " + begin);
  }

  /** The name of a track: its static name, or "thread:" and the tid of a thread's track. */
  String trackName(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    if (d == null) {
      return "?";
    }
    return d.hasThread() ? "thread:" + d.getThread().getTid() : d.getStaticName();
  }
}
