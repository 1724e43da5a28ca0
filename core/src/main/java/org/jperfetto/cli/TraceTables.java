package org.jperfetto.cli;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jperfetto.protos.BuiltinClock;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.StackSample;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent;

/**
 * What {@code jperfetto view} shows of a trace, gathered packet by packet with trace_processor's
 * rules: packets that need incremental state their sequence lost are skipped (the verdict of
 * {@link IncrementalStateTracker}, given with each packet), interned names resolved per sequence
 * ({@link ViewSequence}), each TrackEvent slice's begin matched with its end on the same track.
 * Memory grows with the distinct names, tracks and open slices, not with the trace's length.
 */
final class TraceTables {
  /** Count, total and longest duration of a set of slices. */
  static final class Durations {
    long count;
    long total;
    long max;

    void add(long duration) {
      count++;
      total += duration;
      max = Math.max(max, duration);
    }
  }

  /** The collections of one collector and their pauses. */
  static final class GcPauses {
    long collections;
    long total;
    long longest;
  }

  /** A counter track's samples. */
  static final class CounterValues {
    long count;
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    double last;

    void add(double v) {
      count++;
      min = Math.min(min, v);
      max = Math.max(max, v);
      last = v;
    }
  }

  /** What one thread (or other track owner) did. */
  static final class ThreadActivity {
    long slices;
    /** Time in the outermost slices on the thread's own track. */
    long topLevel;
    long samples;
  }

  /** How far up the parent tracks {@link #owner} looks for a thread. */
  private static final int MAX_TRACK_DEPTH = 16;

  private record Open(String name, String category, long start) {}

  final Map<String, Durations> slicesByName = new HashMap<>();
  final Map<String, GcPauses> gcPausesByName = new HashMap<>();
  final Map<Long, TrackDescriptor> tracks = new HashMap<>();
  final Map<Long, CounterValues> countersByTrack = new LinkedHashMap<>();
  final Map<String, Long> samplesByLeaf = new HashMap<>();
  final Map<Long, Long> samplesByTid = new HashMap<>();
  /** Per track: slices and outermost-slice time; resolved to threads by {@link #byThread}. */
  private final Map<Long, ThreadActivity> byTrack = new HashMap<>();
  private final Map<Long, ArrayDeque<Open>> open = new HashMap<>();
  private final Map<Integer, ViewSequence> sequences = new HashMap<>();
  /** Offsets of the builtin clocks from BOOTTIME, from the first clock snapshot of the trace. */
  private Map<Integer, Long> clockOffsets;
  long instants;
  long samples;
  long unreadablePackets;
  long firstTimestamp = Long.MAX_VALUE;
  long lastTimestamp = Long.MIN_VALUE;

  /**
   * Takes packet p, in file order, with trace_processor's verdict on it (from {@link
   * TraceSummary.Tally#add}): a packet it cannot read is only counted.
   */
  void add(TracePacket p, IncrementalStateTracker.Verdict verdict) {
    if (clockOffsets == null && p.hasClockSnapshot()
        && p.getClockSnapshot().getClocksList().stream().noneMatch(ClockSnapshot.Clock::getIsIncremental)) {
      takeClockSnapshot(p.getClockSnapshot());
    }
    if (verdict != IncrementalStateTracker.Verdict.READABLE) {
      unreadablePackets++;
      return;
    }
    ViewSequence seq = sequences.computeIfAbsent(p.getTrustedPacketSequenceId(), k -> new ViewSequence());
    seq.update(p);
    long ts = seq.timestamp(p);
    if (p.hasTimestamp()) {
      long boot = onBoottime(ts, seq.lastClock());
      firstTimestamp = Math.min(firstTimestamp, boot);
      lastTimestamp = Math.max(lastTimestamp, boot);
    }
    if (p.hasTrackDescriptor()) {
      tracks.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor());
    }
    if (p.hasTrackEvent()) {
      addTrackEvent(p.getTrackEvent(), seq, ts);
    }
    if (p.hasStackSample()) {
      addSample(p.getStackSample(), seq);
    }
  }

  private void addTrackEvent(TrackEvent e, ViewSequence seq, long ts) {
    long track = e.hasTrackUuid() ? e.getTrackUuid() : seq.defaultTrack();
    switch (e.getType()) {
      case TYPE_SLICE_BEGIN -> {
        String name = e.hasNameIid() ? seq.eventName(e.getNameIid()) : e.getName();
        String category = e.getCategoryIidsCount() > 0 ? seq.category(e.getCategoryIids(0))
            : e.getCategoriesCount() > 0 ? e.getCategories(0) : "";
        open.computeIfAbsent(track, k -> new ArrayDeque<>()).push(new Open(name, category, ts));
        addCollection(name, e);
      }
      case TYPE_SLICE_END -> {
        ArrayDeque<Open> stack = open.get(track);
        Open begin = stack == null ? null : stack.poll();
        if (begin != null) {
          endSlice(track, begin, Math.max(0, ts - begin.start()), stack.isEmpty());
        }
      }
      case TYPE_INSTANT -> instants++;
      case TYPE_COUNTER -> countersByTrack.computeIfAbsent(track, k -> new CounterValues())
          .add(e.hasDoubleCounterValue() ? e.getDoubleCounterValue() : e.getCounterValue());
      default -> { }
    }
  }

  private void endSlice(long track, Open begin, long duration, boolean outermost) {
    slicesByName.computeIfAbsent(begin.name(), k -> new Durations()).add(duration);
    ThreadActivity a = byTrack.computeIfAbsent(track, k -> new ThreadActivity());
    a.slices++;
    if (outermost) {
      a.topLevel += duration;
    }
  }

  /**
   * A garbage collection as jvm.jfr writes it (JFR's jdk.GarbageCollection: its sumOfPauses and
   * longestPause as debug annotations): its pauses, by collector. A concurrent collection's slice
   * spans more than its pauses, so the annotations, not the slice, say how long the app stopped.
   */
  private void addCollection(String name, TrackEvent e) {
    Long sum = null;
    long longest = 0;
    for (DebugAnnotation a : e.getDebugAnnotationsList()) {
      if ("sumOfPauses".equals(a.getName())) {
        sum = a.getIntValue();
      } else if ("longestPause".equals(a.getName())) {
        longest = a.getIntValue();
      }
    }
    if (sum != null) {
      GcPauses g = gcPausesByName.computeIfAbsent(name, k -> new GcPauses());
      g.collections++;
      g.total += sum;
      g.longest = Math.max(g.longest, longest);
    }
  }

  private void addSample(StackSample s, ViewSequence seq) {
    samples++;
    if (s.hasCallstackIid()) {
      samplesByLeaf.merge(seq.leafFunction(s.getCallstackIid()), 1L, Long::sum);
    }
    if (s.hasTaskContext()) {
      long tid = s.getTaskContext().getTid();
      samplesByTid.merge(tid, 1L, Long::sum);
    }
  }

  private void takeClockSnapshot(ClockSnapshot snapshot) {
    Long boot = null;
    for (ClockSnapshot.Clock c : snapshot.getClocksList()) {
      if (c.getClockId() == BuiltinClock.BUILTIN_CLOCK_BOOTTIME_VALUE) {
        boot = c.getTimestamp();
      }
    }
    if (boot == null) {
      return;
    }
    clockOffsets = new HashMap<>();
    for (ClockSnapshot.Clock c : snapshot.getClocksList()) {
      clockOffsets.put(c.getClockId(), c.getTimestamp() - boot);
    }
  }

  /** ts on clock, moved to BOOTTIME when the trace's clock snapshot relates the two. */
  private long onBoottime(long ts, int clock) {
    if (clock == 0 || clockOffsets == null) {
      return ts;
    }
    Long offset = clockOffsets.get(clock);
    return offset == null ? ts : ts - offset;
  }

  /** Slices begun and not ended by the end of the trace (not in the tables). */
  long unendedSlices() {
    return open.values().stream().mapToLong(ArrayDeque::size).sum();
  }

  /**
   * The activity per thread: each track's slices go to the thread it belongs to (the track itself
   * or its parent names the thread), outermost-slice time only from the thread's own track; stack
   * samples by their tid. Keys are the labels {@link #label} gives.
   */
  Map<String, ThreadActivity> byThread() {
    Map<Long, String> threadLabels = new HashMap<>();
    for (TrackDescriptor d : tracks.values()) {
      if (d.hasThread()) {
        threadLabels.put(d.getThread().getTid(), label(d));
      }
    }
    Map<String, ThreadActivity> out = new HashMap<>();
    byTrack.forEach((uuid, activity) -> {
      TrackDescriptor d = tracks.get(uuid);
      TrackDescriptor owner = owner(d);
      ThreadActivity a = out.computeIfAbsent(owner == null ? "track " + Long.toUnsignedString(uuid) : label(owner),
          k -> new ThreadActivity());
      a.slices += activity.slices;
      if (owner == d) {
        a.topLevel += activity.topLevel;
      }
    });
    samplesByTid.forEach((tid, n) -> out.computeIfAbsent(threadLabels.getOrDefault(tid, "tid " + tid),
        k -> new ThreadActivity()).samples += n);
    return out;
  }

  /**
   * The track that names who did what happens on d: d or its nearest ancestor with a thread (a
   * bounded walk: a file may describe a cycle of parents).
   */
  private TrackDescriptor owner(TrackDescriptor d) {
    TrackDescriptor t = d;
    for (int hops = 0; t != null && hops < MAX_TRACK_DEPTH; hops++,
        t = t.hasParentUuid() ? tracks.get(t.getParentUuid()) : null) {
      if (t.hasThread()) {
        return t;
      }
    }
    return d;
  }

  /** How the view names a track's owner: a thread's name and tid, else the track's name. */
  static String label(TrackDescriptor d) {
    if (d.hasThread()) {
      String name = d.getThread().hasThreadName() ? d.getThread().getThreadName() : name(d);
      return (name.isEmpty() ? "thread" : name) + " (" + d.getThread().getTid() + ")";
    }
    if (d.hasProcess()) {
      String name = d.getProcess().hasProcessName() ? d.getProcess().getProcessName() : name(d);
      return (name.isEmpty() ? "process" : name) + " (pid " + d.getProcess().getPid() + ")";
    }
    String name = name(d);
    return name.isEmpty() ? "track " + Long.toUnsignedString(d.getUuid()) : name;
  }

  /** A track's name, static (static_name, as the SDK gives fixed names) or not; "" if none. */
  private static String name(TrackDescriptor d) {
    return d.hasStaticName() ? d.getStaticName() : d.getName();
  }

  /** A counter track's name and unit. */
  String counterName(long uuid) {
    TrackDescriptor d = tracks.get(uuid);
    if (d == null) {
      return "counter " + Long.toUnsignedString(uuid);
    }
    String unit = d.getCounter().getUnitName();
    return label(d) + (unit.isEmpty() ? "" : " (" + unit + ")");
  }
}
