package org.jperfetto.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/**
 * A demo trace read back for assertions: TrackEvents with interned names resolved per trusted
 * sequence, each placed on its track, and the tracks named (a thread track by its thread name, a
 * custom or counter track by its own name). Sequences that intern nothing (jvm.jfr writes
 * self-contained packets: inline names, absolute CLOCK_MONOTONIC timestamps) need no incremental
 * state. Only what the demo and agent tests look at.
 */
public final class DemoTrace {
  /**
   * One event: where it is (track: the thread's name on a thread track; lane: the track's own
   * name, e.g. "GC" for jvm.jfr's lanes), what it is called, its annotations (Long, Double,
   * Boolean, String), the packet's timestamp as written (absolute only on absolute clocks).
   */
  public record Event(TrackEvent.Type type, String name, String track, String lane, Map<String, Object> args,
      TrackEvent raw, TracePacket packet) {}

  public final List<Event> events = new ArrayList<>();
  public final List<String> problems = new ArrayList<>();
  final List<TracePacket> servicePackets = new ArrayList<>();
  private final Map<Long, TrackDescriptor> tracks = new HashMap<>();
  private final List<PendingEvent> pending = new ArrayList<>();
  private final Map<Integer, Interning> interning = new HashMap<>();

  private record PendingEvent(long trackUuid, TrackEvent.Type type, String name, Map<String, Object> args,
      TrackEvent raw, TracePacket packet) {}

  private static final class Interning {
    final Map<Long, String> names = new HashMap<>();
    final Map<Long, String> annotationNames = new HashMap<>();
    long defaultTrack;
  }

  public static DemoTrace of(Iterable<TracePacket> packets) {
    DemoTrace t = new DemoTrace();
    for (TracePacket p : packets) {
      t.add(p);
    }
    for (PendingEvent e : t.pending) {
      t.events.add(new Event(e.type(), e.name(), t.trackName(e.trackUuid()), t.laneName(e.trackUuid()), e.args(),
          e.raw(), e.packet()));
    }
    return t;
  }

  private void add(TracePacket p) {
    if (p.hasTrackDescriptor()) {
      tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
    }
    if (!p.hasTrackEvent() && !p.hasInternedData() && !p.hasTracePacketDefaults()) {
      if (!p.hasTrackDescriptor()) {
        servicePackets.add(p);
      }
      return;
    }
    int seq = p.getTrustedPacketSequenceId();
    if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
      interning.put(seq, new Interning());
    }
    Interning state = interning.get(seq);
    if (state == null) {
      boolean needsState = (p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE) != 0
          || p.hasInternedData() || p.hasTracePacketDefaults() || usesInterning(p.getTrackEvent());
      if (needsState) {
        problems.add("event before incremental state on sequence " + seq);
        return;
      }
      state = new Interning(); // self-contained packets: nothing to look up
    }
    Interning in = state;
    if (p.hasTracePacketDefaults()) {
      in.defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
    }
    InternedData d = p.getInternedData();
    d.getEventNamesList().forEach(n -> in.names.put(n.getIid(), n.getName()));
    d.getDebugAnnotationNamesList().forEach(n -> in.annotationNames.put(n.getIid(), n.getName()));
    if (!p.hasTrackEvent()) {
      return;
    }
    TrackEvent e = p.getTrackEvent();
    String name = e.hasNameIid() ? lookup(in.names, e.getNameIid(), seq) : e.hasName() ? e.getName() : null;
    Map<String, Object> args = new HashMap<>();
    for (DebugAnnotation a : e.getDebugAnnotationsList()) {
      String key = a.hasNameIid() ? lookup(in.annotationNames, a.getNameIid(), seq) : a.getName();
      args.put(key, a.hasIntValue() ? (Object) a.getIntValue() : a.hasDoubleValue() ? (Object) a.getDoubleValue()
          : a.hasBoolValue() ? (Object) a.getBoolValue() : a.getStringValue());
    }
    pending.add(new PendingEvent(e.hasTrackUuid() ? e.getTrackUuid() : in.defaultTrack, e.getType(), name, args, e, p));
  }

  private static boolean usesInterning(TrackEvent e) {
    return e.hasNameIid() || e.getCategoryIidsCount() > 0 || !e.hasTrackUuid()
        || e.getDebugAnnotationsList().stream().anyMatch(DebugAnnotation::hasNameIid);
  }

  private String lookup(Map<Long, String> table, long iid, int seq) {
    String s = table.get(iid);
    if (s == null) {
      problems.add("iid " + iid + " not interned on sequence " + seq);
    }
    return s;
  }

  /**
   * The thread name of a thread track or of a lane under one (as trace_processor groups it), the
   * name of any other track; "?uuid" when undescribed.
   */
  public String trackName(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    if (d == null) {
      return "?" + Long.toUnsignedString(uuid);
    }
    TrackDescriptor thread = threadOf(d);
    if (thread != null) {
      return thread.getThread().getThreadName();
    }
    return d.hasStaticName() ? d.getStaticName() : d.getName();
  }

  /** The thread track d is or hangs under directly; null for other tracks. */
  private TrackDescriptor threadOf(TrackDescriptor d) {
    if (d.hasThread()) {
      return d;
    }
    TrackDescriptor parent = d.hasParentUuid() ? tracks.get(d.getParentUuid()) : null;
    return parent != null && parent.hasThread() ? parent : null;
  }

  /** A track's own name (for a thread track, the lane name jvm.jfr gives it); "" when it has none. */
  String laneName(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    return d == null ? "" : d.hasStaticName() ? d.getStaticName() : d.getName();
  }

  /** The pid of a thread track's descriptor (or of the thread a lane hangs under), 0 for other tracks. */
  int pidOf(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    TrackDescriptor thread = d == null ? null : threadOf(d);
    return thread != null ? thread.getThread().getPid() : 0;
  }

  /** Thread names of the thread track descriptors. */
  Set<String> threadNames() {
    return tracks.values().stream().filter(TrackDescriptor::hasThread)
        .map(d -> d.getThread().getThreadName()).collect(Collectors.toSet());
  }

  boolean hasCounterTrack(String name) {
    return tracks.values().stream().anyMatch(d -> d.hasCounter()
        && (name.equals(d.getStaticName()) || name.equals(d.getName())));
  }

  public List<Event> named(String name) {
    return events.stream().filter(e -> name.equals(e.name())).toList();
  }

  List<Event> ofType(TrackEvent.Type type) {
    return events.stream().filter(e -> e.type() == type).toList();
  }

  List<Event> onTrack(String track) {
    return events.stream().filter(e -> track.equals(e.track())).toList();
  }

  /** Events of a TrackEvent category (inline categories; jvm.jfr writes "jvm.gc" and the like). */
  public List<Event> inCategory(String category) {
    return events.stream().filter(e -> e.raw().getCategoriesList().contains(category)).toList();
  }
}
