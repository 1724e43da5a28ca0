package org.jperfetto.cli;

import java.util.HashMap;
import java.util.Map;
import org.jperfetto.protos.Callstack;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.Frame;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.InternedString;
import org.jperfetto.protos.TracePacket;

/**
 * One packet sequence's incremental state as {@code jperfetto view} reads it: the interned names
 * (event names, categories, function names, frames, callstacks), the default track and clock from
 * trace_packet_defaults, and the sequence's incremental clock. Cleared when the sequence clears its
 * incremental state, as trace_processor clears it.
 */
final class ViewSequence {
  private final Map<Long, String> eventNames = new HashMap<>();
  private final Map<Long, String> categories = new HashMap<>();
  private final Map<Long, String> functionNames = new HashMap<>();
  private final Map<Long, Long> frameFunctions = new HashMap<>();
  private final Map<Long, Long> callstackLeaves = new HashMap<>();
  private long defaultTrack;
  private int defaultClock;
  private int incrementalClockId = -1;
  private long incrementalClock;
  /** The clock the incremental clock's values are on, and what to add to get there. */
  private int incrementalBase;
  private long incrementalOffset;
  private int lastClock;

  /** Takes the state packet p sets; call for every packet of the sequence the view reads, in order. */
  void update(TracePacket p) {
    if (p.getIncrementalStateCleared()
        || (p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
      eventNames.clear();
      categories.clear();
      functionNames.clear();
      frameFunctions.clear();
      callstackLeaves.clear();
      incrementalClockId = -1;
    }
    if (p.hasTracePacketDefaults()) {
      defaultClock = p.getTracePacketDefaults().getTimestampClockId();
      defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
    }
    if (p.hasClockSnapshot()) {
      ClockSnapshot.Clock base = null;
      for (ClockSnapshot.Clock c : p.getClockSnapshot().getClocksList()) {
        if (c.getIsIncremental()) {
          incrementalClockId = c.getClockId();
          incrementalClock = c.getTimestamp();
        } else {
          base = c;
        }
      }
      if (incrementalClockId >= 0) {
        incrementalBase = base == null ? incrementalClockId : base.getClockId();
        incrementalOffset = base == null ? 0 : base.getTimestamp() - incrementalClock;
      }
    }
    if (p.hasInternedData()) {
      InternedData d = p.getInternedData();
      d.getEventNamesList().forEach(n -> eventNames.put(n.getIid(), n.getName()));
      d.getEventCategoriesList().forEach(c -> categories.put(c.getIid(), c.getName()));
      for (InternedString s : d.getFunctionNamesList()) {
        functionNames.put(s.getIid(), s.getStr().toStringUtf8());
      }
      for (Frame f : d.getFramesList()) {
        frameFunctions.put(f.getIid(), f.getFunctionNameId());
      }
      for (Callstack c : d.getCallstacksList()) {
        if (c.getFrameIdsCount() > 0) {
          callstackLeaves.put(c.getIid(), c.getFrameIds(c.getFrameIdsCount() - 1));
        }
      }
    }
  }

  /**
   * The packet's timestamp, with a delta on the sequence's incremental clock made absolute and put
   * on the clock the sequence's snapshot ties it to (so call once per packet, in order); {@link
   * #lastClock} then says which clock it is on.
   */
  long timestamp(TracePacket p) {
    int clock = p.hasTimestampClockId() ? p.getTimestampClockId() : defaultClock;
    if (clock == incrementalClockId && incrementalClockId >= 0) {
      incrementalClock += p.getTimestamp();
      lastClock = incrementalBase;
      return incrementalClock + incrementalOffset;
    }
    lastClock = clock;
    return p.getTimestamp();
  }

  /** The clock of the timestamp {@link #timestamp} returned last (0: the trace's default). */
  int lastClock() {
    return lastClock;
  }

  long defaultTrack() {
    return defaultTrack;
  }

  String eventName(long iid) {
    return eventNames.getOrDefault(iid, "?");
  }

  String category(long iid) {
    return categories.getOrDefault(iid, "?");
  }

  /** The leaf (innermost) function of an interned callstack, or "?" when not known. */
  String leafFunction(long callstackIid) {
    Long frame = callstackLeaves.get(callstackIid);
    Long function = frame == null ? null : frameFunctions.get(frame);
    String name = function == null ? null : functionNames.get(function);
    return name == null ? "?" : name;
  }
}
