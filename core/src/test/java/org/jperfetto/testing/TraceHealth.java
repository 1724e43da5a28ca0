package org.jperfetto.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TrackDescriptor;

/**
 * What trace_processor would flag in a trace as an error or data loss, from the trace's own
 * TraceConfig and TraceStats packets: write_into_file without flush_period_ms (stat
 * config_write_into_file_no_flush), discarded or overwritten chunks, failed patches, ABI
 * violations, writer packet loss, invalid packets, failed flushes.
 */
public final class TraceHealth {
  private TraceHealth() {}

  /** The problems found; empty for a clean trace. A trace with no TraceStats is a problem too. */
  public static List<String> problems(Trace trace) {
    List<String> problems = new ArrayList<>();
    TraceStats stats = null;
    for (TracePacket p : trace.getPacketList()) {
      if (p.hasTraceConfig()) {
        TraceConfig c = p.getTraceConfig();
        if (c.getWriteIntoFile() && c.getFlushPeriodMs() == 0) {
          problems.add("config_write_into_file_no_flush: write_into_file without flush_period_ms");
        }
      }
      if (p.hasTraceStats()) {
        stats = p.getTraceStats();
      }
    }
    if (stats == null) {
      problems.add("no TraceStats packet");
      return problems;
    }
    nonZero(problems, "chunks_discarded", stats.getChunksDiscarded());
    nonZero(problems, "patches_discarded", stats.getPatchesDiscarded());
    nonZero(problems, "invalid_packets", stats.getInvalidPackets());
    nonZero(problems, "flushes_failed", stats.getFlushesFailed());
    if (stats.getFinalFlushOutcome() == TraceStats.FinalFlushOutcome.FINAL_FLUSH_FAILED) {
      problems.add("final_flush_outcome=FINAL_FLUSH_FAILED");
    }
    for (int i = 0; i < stats.getBufferStatsCount(); i++) {
      TraceStats.BufferStats b = stats.getBufferStats(i);
      String at = "buffer " + i + " ";
      nonZero(problems, at + "chunks_overwritten", b.getChunksOverwritten());
      nonZero(problems, at + "chunks_discarded", b.getChunksDiscarded());
      nonZero(problems, at + "patches_failed", b.getPatchesFailed());
      nonZero(problems, at + "abi_violations", b.getAbiViolations());
      nonZero(problems, at + "trace_writer_packet_loss", b.getTraceWriterPacketLoss());
    }
    return problems;
  }

  /**
   * Where trace_processor would split one process or thread into several: it takes a second track
   * uuid describing the same pid (a process track) or the same tid (a thread track) as pid or tid
   * reuse and starts a new process or thread, so one JVM's events land on separate processes in
   * the UI. Also one uuid described with different parents, pids or tids (a conflicting
   * reservation, which trace_processor drops). Empty when every pid and tid has one track.
   */
  public static List<String> trackSplits(List<TracePacket> packets) {
    Map<Long, Set<Long>> uuidsByPid = new TreeMap<>();
    Map<Long, Set<Long>> uuidsByTid = new TreeMap<>();
    Map<Long, String> reservations = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (TracePacket p : packets) {
      if (!p.hasTrackDescriptor()) {
        continue;
      }
      TrackDescriptor d = p.getTrackDescriptor();
      String reservation = "parent=" + d.getParentUuid();
      if (d.hasThread()) {
        uuidsByTid.computeIfAbsent(d.getThread().getTid(), k -> new TreeSet<>()).add(d.getUuid());
        reservation += " pid=" + d.getThread().getPid() + " tid=" + d.getThread().getTid();
      } else if (d.hasProcess()) {
        uuidsByPid.computeIfAbsent((long) d.getProcess().getPid(), k -> new TreeSet<>()).add(d.getUuid());
        reservation += " pid=" + d.getProcess().getPid();
      }
      String before = reservations.putIfAbsent(d.getUuid(), reservation);
      if (before != null && !before.equals(reservation)) {
        problems.add("track " + Long.toUnsignedString(d.getUuid()) + " described as " + before + " and " + reservation);
      }
    }
    uuidsByPid.forEach((pid, uuids) -> {
      if (uuids.size() > 1) {
        problems.add("pid " + pid + " has " + uuids.size() + " process tracks");
      }
    });
    uuidsByTid.forEach((tid, uuids) -> {
      if (uuids.size() > 1) {
        problems.add("tid " + tid + " has " + uuids.size() + " thread tracks");
      }
    });
    return problems;
  }

  private static void nonZero(List<String> problems, String stat, long value) {
    if (value != 0) {
      problems.add(stat + "=" + value);
    }
  }
}
