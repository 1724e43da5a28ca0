package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/** A read-back trace's TrackEvent content: descriptors, slices (begin/end joined), instants, counters. */
final class TraceSlices {
  record Slice(long track, String name, String category, long begin, long end, Map<String, Object> args) {
    long duration() {
      return end - begin;
    }
  }

  record Sample(long track, long ts, double value) {}

  final Map<Long, TrackDescriptor> tracks = new HashMap<>();
  final List<Slice> slices = new ArrayList<>();
  final List<Slice> instants = new ArrayList<>();
  final List<Sample> counters = new ArrayList<>();
  final List<Long> timestamps = new ArrayList<>();

  TraceSlices(List<TracePacket> packets) {
    Map<String, Deque<TracePacket>> open = new HashMap<>();
    for (TracePacket p : packets) {
      if (p.hasTrackDescriptor()) {
        tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
      }
      if (!p.hasTrackEvent()) {
        continue;
      }
      assertEquals(3, p.getTimestampClockId(), "CLOCK_MONOTONIC");
      timestamps.add(p.getTimestamp());
      TrackEvent e = p.getTrackEvent();
      String key = p.getTrustedPacketSequenceId() + "/" + e.getTrackUuid();
      switch (e.getType()) {
        case TYPE_SLICE_BEGIN -> open.computeIfAbsent(key, k -> new ArrayDeque<>()).push(p);
        case TYPE_SLICE_END -> {
          Deque<TracePacket> stack = open.get(key);
          assertTrue(stack != null && !stack.isEmpty(), "END without BEGIN on " + key);
          TracePacket b = stack.pop();
          assertTrue(p.getTimestamp() >= b.getTimestamp(), "END before its BEGIN");
          slices.add(slice(b, p.getTimestamp()));
        }
        case TYPE_INSTANT -> instants.add(slice(p, p.getTimestamp()));
        case TYPE_COUNTER -> counters.add(new Sample(e.getTrackUuid(), p.getTimestamp(),
            e.hasDoubleCounterValue() ? e.getDoubleCounterValue() : e.getCounterValue()));
        default -> { }
      }
    }
    for (Deque<TracePacket> d : open.values()) {
      assertTrue(d.isEmpty(), "a slice was left open");
    }
  }

  private static Slice slice(TracePacket b, long end) {
    TrackEvent e = b.getTrackEvent();
    Map<String, Object> args = new HashMap<>();
    for (DebugAnnotation a : e.getDebugAnnotationsList()) {
      Object v = a.hasIntValue() ? (Object) a.getIntValue() : a.hasDoubleValue() ? (Object) a.getDoubleValue()
          : a.hasBoolValue() ? (Object) a.getBoolValue() : a.getStringValue();
      args.put(a.getName(), v);
    }
    return new Slice(e.getTrackUuid(), e.getName(), e.getCategories(0), b.getTimestamp(), end, args);
  }

  /**
   * The thread tid of a slice's track: the track's own, or its parent's for a lane under a thread
   * (as trace_processor places it); 0 for a track of the process.
   */
  long tidOf(long track) {
    TrackDescriptor d = tracks.get(track);
    assertTrue(d != null, "no descriptor for track " + track);
    if (!d.hasThread() && d.hasParentUuid() && tracks.containsKey(d.getParentUuid())) {
      d = tracks.get(d.getParentUuid());
    }
    return d.hasThread() ? d.getThread().getTid() : 0;
  }

  String trackName(long track) {
    return tracks.get(track).getName();
  }

  /** Counter samples on the counter track called name. */
  List<Sample> counter(String name) {
    return counters.stream().filter(s -> name.equals(tracks.get(s.track()).getName())).toList();
  }

  /** Slices of one track, sorted by begin, must nest: none ends after its enclosing one. */
  void assertProperlyNested() {
    Map<Long, List<Slice>> byTrack = new HashMap<>();
    for (Slice s : slices) {
      byTrack.computeIfAbsent(s.track(), k -> new ArrayList<>()).add(s);
    }
    for (List<Slice> list : byTrack.values()) {
      list.sort((a, b) -> a.begin() != b.begin() ? Long.compare(a.begin(), b.begin()) : Long.compare(b.end(), a.end()));
      Deque<Slice> stack = new ArrayDeque<>();
      for (Slice s : list) {
        while (!stack.isEmpty() && stack.peek().end() <= s.begin()) {
          stack.pop();
        }
        if (!stack.isEmpty()) {
          assertTrue(s.end() <= stack.peek().end(), "partial overlap on track " + trackName(s.track()) + ": "
              + stack.peek() + " and " + s);
        }
        stack.push(s);
      }
    }
  }
}
