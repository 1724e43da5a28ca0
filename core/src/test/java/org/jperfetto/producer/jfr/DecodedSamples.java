package org.jperfetto.producer.jfr;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.protos.Callstack;
import org.jperfetto.protos.Frame;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.InternedString;
import org.jperfetto.protos.Mapping;
import org.jperfetto.protos.TracePacket;

/**
 * The StackSample packets of a trace with their interned data resolved as trace_processor does:
 * per sequence, tables start afresh at SEQ_INCREMENTAL_STATE_CLEARED, a packet's interned_data is
 * known from that packet on, and a sample whose callstack, frame or name is unknown fails the
 * decoding (so a test sees an encoder that referred to state the reader never got).
 */
public final class DecodedSamples {
  /** One frame as the trace names it. */
  public record DecodedFrame(String function, String mapping, int line, String kind) {}

  /** One sample: where and when, the profiler source, frames root first. */
  public record Sample(long ts, int sequence, int state, long pid, long tid, String source, String timebase,
      List<DecodedFrame> frames) {
    /** The innermost frame's function name. */
    public String leaf() {
      return frames.get(frames.size() - 1).function();
    }
  }

  public final List<Sample> samples = new ArrayList<>();
  /** TrackEvents that refer to an interned callstack: their name and frames, root first. */
  public final List<EventStack> eventStacks = new ArrayList<>();

  /** A TrackEvent's name and its callstack's frames, root first. */
  public record EventStack(String name, List<DecodedFrame> frames) {
    /** The innermost frame's function name. */
    public String leaf() {
      return frames.get(frames.size() - 1).function();
    }
  }
  /** Thread names from TrackDescriptors, by tid. */
  public final Map<Long, String> threadNames = new HashMap<>();
  /** Times a sequence cleared its incremental state. */
  public int clears;

  private static final class Sequence {
    final Map<Long, String> functionNames = new HashMap<>();
    final Map<Long, String> mappingPaths = new HashMap<>();
    final Map<Long, Mapping> mappings = new HashMap<>();
    final Map<Long, Frame> frames = new HashMap<>();
    final Map<Long, Callstack> callstacks = new HashMap<>();
    String source;
    String timebase;
    boolean valid;
  }

  public DecodedSamples(List<TracePacket> packets) {
    Map<Integer, Sequence> sequences = new HashMap<>();
    for (TracePacket p : packets) {
      if (p.hasTrackDescriptor() && p.getTrackDescriptor().hasThread()
          && p.getTrackDescriptor().getThread().hasThreadName()) {
        threadNames.put(p.getTrackDescriptor().getThread().getTid(),
            p.getTrackDescriptor().getThread().getThreadName());
      }
      int id = p.getTrustedPacketSequenceId();
      Sequence seq = sequences.computeIfAbsent(id, k -> new Sequence());
      if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
        seq = new Sequence();
        seq.valid = true;
        sequences.put(id, seq);
        clears++;
      }
      if (p.hasTracePacketDefaults() && p.getTracePacketDefaults().hasStackSampleDefaults()) {
        seq.source = p.getTracePacketDefaults().getStackSampleDefaults().getSource();
        seq.timebase = p.getTracePacketDefaults().getStackSampleDefaults().getPrimaryDescriptor().getName();
      }
      if (p.hasInternedData()) {
        InternedData d = p.getInternedData();
        for (InternedString s : d.getFunctionNamesList()) {
          seq.functionNames.put(s.getIid(), s.getStr().toStringUtf8());
        }
        for (InternedString s : d.getMappingPathsList()) {
          seq.mappingPaths.put(s.getIid(), s.getStr().toStringUtf8());
        }
        for (Mapping m : d.getMappingsList()) {
          seq.mappings.put(m.getIid(), m);
        }
        for (Frame f : d.getFramesList()) {
          seq.frames.put(f.getIid(), f);
        }
        for (Callstack c : d.getCallstacksList()) {
          seq.callstacks.put(c.getIid(), c);
        }
      }
      if (p.hasTrackEvent() && p.getTrackEvent().getCallstackIid() != 0) {
        if (!seq.valid) {
          throw new AssertionError("track event callstack before its sequence cleared its state: " + p);
        }
        eventStacks.add(new EventStack(p.getTrackEvent().getName(), frames(seq, p.getTrackEvent().getCallstackIid())));
      }
      if (!p.hasStackSample()) {
        continue;
      }
      if (!seq.valid) {
        throw new AssertionError("stack sample before its sequence cleared its incremental state: " + p);
      }
      var s = p.getStackSample();
      List<DecodedFrame> frames = frames(seq, s.getCallstackIid());
      samples.add(new Sample(p.getTimestamp(), id, clears, s.getTaskContext().getPid(), s.getTaskContext().getTid(),
          seq.source, seq.timebase, frames));
    }
  }

  private static List<DecodedFrame> frames(Sequence seq, long callstackIid) {
    Callstack c = require(seq.callstacks, callstackIid, "callstack");
    List<DecodedFrame> frames = new ArrayList<>();
    for (long frameId : c.getFrameIdsList()) {
      Frame f = require(seq.frames, frameId, "frame");
      String mapping = null;
      if (f.getMappingId() != 0) {
        Mapping m = require(seq.mappings, f.getMappingId(), "mapping");
        mapping = require(seq.mappingPaths, m.getPathStringIds(0), "mapping path");
      }
      String kind = f.hasKind() ? f.getKind().name() : f.hasKindStr() ? f.getKindStr() : null;
      frames.add(new DecodedFrame(require(seq.functionNames, f.getFunctionNameId(), "function name"), mapping,
          f.getLineNumber(), kind));
    }
    return frames;
  }

  /** The samples taken on thread tid. */
  public List<Sample> on(long tid) {
    return samples.stream().filter(s -> s.tid() == tid).toList();
  }

  private static <T> T require(Map<Long, T> table, long iid, String what) {
    T v = table.get(iid);
    if (v == null) {
      throw new AssertionError(what + " " + iid + " not interned on its sequence");
    }
    return v;
  }
}
