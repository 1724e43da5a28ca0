package org.jperfetto.scripts;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;

/**
 * How well a trace's TrackEvent slices line up with the kernel's scheduling, as trace_processor
 * would see it: converts each slice begin to BOOTTIME through the service's first clock snapshot
 * (and its sequence's incremental clock), and counts the begins that fall inside a running
 * interval of their own thread, from ftrace sched_switch events (non-compact). A thread that emits
 * an event is running then, so the share should be high; a skewed clock snapshot lowers it.
 *
 * <pre>java -cp ... org.jperfetto.scripts.SchedAlignment TRACE [shift_ns]</pre>
 *
 * Prints {@code begins=N inside=M share=P% mono_minus_boot=D} (D: MONOTONIC - BOOTTIME in the
 * service's first snapshot). Used by scripts/clock-alignment.sh; not part of the product.
 */
public final class SchedAlignment {
  private SchedAlignment() {}

  /** Per sequence: the incremental clock's running value and its offset to a reference clock. */
  private static final class Seq {
    long incremental;
    long offsetToRef;
    int refClock;
    int incrementalClockId = -1;
    int defaultClockId;
    long defaultTrack;
  }

  record Result(long begins, long inside, long monoMinusBoot) {
    String line() {
      return String.format(java.util.Locale.ROOT, "begins=%d inside=%d share=%.1f%% mono_minus_boot=%d",
          begins, inside, begins == 0 ? 0.0 : 100.0 * inside / begins, monoMinusBoot);
    }
  }

  public static void main(String[] args) throws IOException {
    long shift = args.length > 1 ? Long.parseLong(args[1]) : 0;
    try (InputStream in = new BufferedInputStream(Files.newInputStream(Path.of(args[0])), 1 << 16)) {
      System.out.println(analyze(in, shift).line());
    }
  }

  static Result analyze(InputStream in, long shiftNs) throws IOException {
    CodedInputStream cis = CodedInputStream.newInstance(in);
    cis.setSizeLimit(Integer.MAX_VALUE);
    Map<Integer, Seq> seqs = new HashMap<>();
    Map<Long, Long> trackTid = new HashMap<>();
    List<long[]> begins = new ArrayList<>(); // {ts on ref clock, refClock, trackUuid}
    List<long[]> switches = new ArrayList<>(); // {ts boot, cpu, prevPid, nextPid}
    long boot = Long.MIN_VALUE;
    long mono = Long.MIN_VALUE;
    while (!cis.isAtEnd()) {
      int tag = cis.readTag();
      if (tag != 10) {
        cis.skipField(tag);
        continue;
      }
      ByteString bytes = cis.readBytes();
      cis.resetSizeCounter();
      TracePacket p = TracePacket.parseFrom(bytes);
      Seq s = seqs.computeIfAbsent(p.getTrustedPacketSequenceId(), k -> new Seq());
      if (p.hasTracePacketDefaults()) {
        s.defaultClockId = p.getTracePacketDefaults().getTimestampClockId();
        s.defaultTrack = p.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid();
      }
      if (p.hasClockSnapshot()) {
        ClockSnapshot cs = p.getClockSnapshot();
        long inc = 0;
        long ref = 0;
        int refClock = 0;
        int incId = -1;
        for (ClockSnapshot.Clock c : cs.getClocksList()) {
          if (c.getIsIncremental() || c.getClockId() >= 64) {
            inc = c.getTimestamp();
            incId = c.getClockId();
          } else if (c.getClockId() == 3 || c.getClockId() == 6) {
            if (refClock == 0 || c.getClockId() == 6) {
              ref = c.getTimestamp();
              refClock = c.getClockId();
            }
          }
        }
        if (incId >= 0) {
          s.incremental = inc;
          s.incrementalClockId = incId;
          s.offsetToRef = ref - inc;
          s.refClock = refClock;
        } else if (mono == Long.MIN_VALUE) { // the service's snapshot: BOOTTIME and MONOTONIC
          for (ClockSnapshot.Clock c : cs.getClocksList()) {
            if (c.getClockId() == 3) {
              mono = c.getTimestamp();
            }
            if (c.getClockId() == 6) {
              boot = c.getTimestamp();
            }
          }
        }
      }
      if (p.hasTrackDescriptor() && p.getTrackDescriptor().hasThread()) {
        trackTid.put(p.getTrackDescriptor().getUuid(), p.getTrackDescriptor().getThread().getTid());
      }
      if (p.hasTrackEvent()) {
        int clock = p.hasTimestampClockId() ? p.getTimestampClockId() : s.defaultClockId;
        long ts;
        int refClock;
        if (clock == s.incrementalClockId && clock != 0) {
          s.incremental += p.getTimestamp();
          ts = s.incremental + s.offsetToRef;
          refClock = s.refClock;
        } else {
          ts = p.getTimestamp();
          refClock = clock == 0 ? 6 : clock;
        }
        if (p.getTrackEvent().getType() == TrackEvent.Type.TYPE_SLICE_BEGIN) {
          long track = p.getTrackEvent().hasTrackUuid() ? p.getTrackEvent().getTrackUuid() : s.defaultTrack;
          begins.add(new long[] {ts, refClock, track});
        }
      }
      for (ByteString bundle : p.getUnknownFields().hasField(1)
          ? p.getUnknownFields().getField(1).getLengthDelimitedList() : List.<ByteString>of()) {
        readBundle(bundle, switches);
      }
    }
    // Running intervals per tid: from a switch in to the next switch on the same cpu.
    switches.sort((a, b) -> Long.compare(a[0], b[0]));
    Map<Long, long[]> runningSince = new HashMap<>(); // cpu -> {tid, since}
    Map<Long, TreeMap<Long, Long>> intervals = new HashMap<>(); // tid -> start -> end
    long first = switches.isEmpty() ? 0 : switches.get(0)[0];
    long last = switches.isEmpty() ? 0 : switches.get(switches.size() - 1)[0];
    for (long[] sw : switches) {
      long[] cur = runningSince.get(sw[1]);
      if (cur != null) {
        intervals.computeIfAbsent(cur[0], k -> new TreeMap<>()).put(cur[1], sw[0]);
      }
      runningSince.put(sw[1], new long[] {sw[3], sw[0]});
    }
    long monoMinusBoot = mono - boot;
    Map<Long, long[]> perTid = new TreeMap<>();
    long n = 0;
    long inside = 0;
    for (long[] b : begins) {
      Long tid = trackTid.get(b[2]);
      if (tid == null) {
        continue;
      }
      long tsBoot = (b[1] == 3 ? b[0] - monoMinusBoot : b[0]) + shiftNs;
      if (tsBoot <= first || tsBoot >= last) {
        continue;
      }
      n++;
      TreeMap<Long, Long> iv = intervals.get(tid);
      Map.Entry<Long, Long> e = iv == null ? null : iv.floorEntry(tsBoot);
      long[] t = perTid.computeIfAbsent(tid, k -> new long[2]);
      t[0]++;
      if (e != null && tsBoot < e.getValue()) {
        inside++;
        t[1]++;
      }
    }
    if (System.getenv("SCHED_ALIGNMENT_PER_THREAD") != null) {
      perTid.forEach((tid, t) -> System.err.println("tid " + tid + ": " + t[1] + "/" + t[0]
          + (intervals.containsKey(tid) ? "" : " (never scheduled in ftrace)")));
    }
    return new Result(n, inside, monoMinusBoot);
  }

  /** FtraceEventBundle: cpu (1), event (2) { timestamp (1), sched_switch (4) { prev_pid 2, next_pid 6 } }. */
  private static void readBundle(ByteString bundle, List<long[]> out) throws IOException {
    CodedInputStream b = bundle.newCodedInput();
    long cpu = 0;
    List<ByteString> events = new ArrayList<>();
    while (!b.isAtEnd()) {
      int tag = b.readTag();
      switch (tag) {
        case 8 -> cpu = b.readUInt32();
        case 18 -> events.add(b.readBytes());
        default -> b.skipField(tag);
      }
    }
    for (ByteString ev : events) {
      CodedInputStream e = ev.newCodedInput();
      long ts = 0;
      ByteString sw = null;
      while (!e.isAtEnd()) {
        int tag = e.readTag();
        switch (tag) {
          case 8 -> ts = e.readUInt64();
          case 34 -> sw = e.readBytes();
          default -> e.skipField(tag);
        }
      }
      if (sw == null) {
        continue;
      }
      CodedInputStream w = sw.newCodedInput();
      long prev = 0;
      long next = 0;
      while (!w.isAtEnd()) {
        int tag = w.readTag();
        switch (tag) {
          case 16 -> prev = w.readInt32();
          case 48 -> next = w.readInt32();
          default -> w.skipField(tag);
        }
      }
      out.add(new long[] {ts, cpu, prev, next});
    }
  }
}
