package org.jperfetto.producer.track;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/**
 * Reads TrackEvents back the way trace_processor does, for assertions: per sequence, interned ids
 * resolved (cleared on SEQ_INCREMENTAL_STATE_CLEARED, an error if used before being defined or
 * before any state was set), delta timestamps on the incremental clock turned absolute, the default
 * track from trace_packet_defaults, track descriptors collected by uuid. After a packet that says
 * packets were lost before it (previous_packet_dropped), packets that need incremental state are
 * skipped until the state is cleared again, as trace_processor skips them ({@link #skippedAfterLoss}).
 */
final class DecodedEvents {
  /** One TrackEvent with everything resolved. Args map names to Long, Double, Boolean, String, Map or List. */
  record Event(int sequence, TrackEvent.Type type, List<String> categories, String name, long trackUuid,
      long timestamp, Map<String, Object> args, Long counter, Double doubleCounter, List<Long> flows,
      List<Long> terminatingFlows) {}

  final List<Event> events = new ArrayList<>();
  final Map<Long, TrackDescriptor> tracks = new LinkedHashMap<>();
  final Map<Integer, Integer> clearedCount = new HashMap<>();
  final List<String> errors = new ArrayList<>();
  /** Packets that needed incremental state after a loss, before it was cleared: trace_processor skips them. */
  int skippedAfterLoss;

  private static final class Seq {
    boolean valid;
    boolean lost;
    final Map<Long, String> categories = new HashMap<>();
    final Map<Long, String> names = new HashMap<>();
    final Map<Long, String> annotationNames = new HashMap<>();
    long defaultTrack;
    int clockId;
    long incrementalClock;
    boolean incrementalKnown;
  }

  private final Map<Integer, Seq> sequences = new HashMap<>();

  /** Feeds one packet of sequence seqId (the trusted sequence id or the writer id). */
  void add(int seqId, TracePacket p) {
    Seq s = sequences.computeIfAbsent(seqId, k -> new Seq());
    if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
      s.valid = true;
      s.lost = false;
      s.categories.clear();
      s.names.clear();
      s.annotationNames.clear();
      s.incrementalKnown = false;
      clearedCount.merge(seqId, 1, Integer::sum);
    } else if (p.getPreviousPacketDropped() != 0) {
      s.lost = true;
    }
    if (p.hasTracePacketDefaults()) {
      s.clockId = p.getTracePacketDefaults().getTimestampClockId();
      s.defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
    }
    if (p.hasClockSnapshot()) {
      for (ClockSnapshot.Clock c : p.getClockSnapshot().getClocksList()) {
        if (c.getIsIncremental()) {
          s.incrementalClock = c.getTimestamp();
          s.incrementalKnown = true;
        }
      }
    }
    boolean needs = (p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE) != 0;
    if (needs && s.lost) {
      skippedAfterLoss++;
      return;
    }
    if (needs && !s.valid) {
      errors.add("packet needs incremental state before any was set: seq=" + seqId);
      return;
    }
    long ts = p.getTimestamp();
    if (p.hasTimestamp() && !p.hasTimestampClockId() && s.clockId >= 64) {
      if (!s.incrementalKnown) {
        errors.add("delta timestamp without a clock snapshot: seq=" + seqId);
      }
      s.incrementalClock += p.getTimestamp();
      ts = s.incrementalClock;
    }
    if (p.hasInternedData()) {
      InternedData d = p.getInternedData();
      d.getEventCategoriesList().forEach(c -> s.categories.put(c.getIid(), c.getName()));
      d.getEventNamesList().forEach(c -> s.names.put(c.getIid(), c.getName()));
      d.getDebugAnnotationNamesList().forEach(c -> s.annotationNames.put(c.getIid(), c.getName()));
    }
    if (p.hasTrackDescriptor()) {
      tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
    }
    if (!p.hasTrackEvent()) {
      return;
    }
    TrackEvent e = p.getTrackEvent();
    List<String> cats = new ArrayList<>();
    for (long iid : e.getCategoryIidsList()) {
      cats.add(resolve(s.categories, iid, "category", seqId));
    }
    cats.addAll(e.getCategoriesList());
    String name = e.hasNameIid() ? resolve(s.names, e.getNameIid(), "event name", seqId)
        : e.hasName() ? e.getName() : null;
    Map<String, Object> args = new LinkedHashMap<>();
    for (DebugAnnotation a : e.getDebugAnnotationsList()) {
      String key = a.hasNameIid() ? resolve(s.annotationNames, a.getNameIid(), "annotation name", seqId) : a.getName();
      args.put(key, value(a));
    }
    events.add(new Event(seqId, e.getType(), cats, name, e.hasTrackUuid() ? e.getTrackUuid() : s.defaultTrack, ts,
        args, e.hasCounterValue() ? e.getCounterValue() : null,
        e.hasDoubleCounterValue() ? e.getDoubleCounterValue() : null, e.getFlowIdsList(),
        e.getTerminatingFlowIdsList()));
  }

  private String resolve(Map<Long, String> table, long iid, String what, int seqId) {
    String v = table.get(iid);
    if (v == null) {
      errors.add("unknown " + what + " iid " + iid + " on seq " + seqId);
    }
    return v;
  }

  private static Object value(DebugAnnotation a) {
    if (a.hasIntValue()) {
      return a.getIntValue();
    }
    if (a.hasUintValue()) {
      return a.getUintValue();
    }
    if (a.hasDoubleValue()) {
      return a.getDoubleValue();
    }
    if (a.hasBoolValue()) {
      return a.getBoolValue();
    }
    if (a.hasStringValue()) {
      return a.getStringValue();
    }
    if (a.getDictEntriesCount() > 0) {
      Map<String, Object> m = new LinkedHashMap<>();
      for (DebugAnnotation d : a.getDictEntriesList()) {
        m.put(d.getName(), value(d));
      }
      return m;
    }
    if (a.getArrayValuesCount() > 0) {
      List<Object> l = new ArrayList<>();
      for (DebugAnnotation d : a.getArrayValuesList()) {
        l.add(value(d));
      }
      return l;
    }
    return null;
  }

  List<Event> ofType(TrackEvent.Type type) {
    return events.stream().filter(e -> e.type() == type).toList();
  }

  List<Event> named(String name) {
    return events.stream().filter(e -> name.equals(e.name())).toList();
  }
}
