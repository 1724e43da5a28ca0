package org.jperfetto.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.consumer.TraceFileReader;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.ClearPeriod;

/**
 * {@code jperfetto summary FILE}: counts what a trace file holds (packets, TrackEvent slice begins
 * and ends, instants, counters, packets after a data loss: previous_packet_dropped) and prints the
 * trace's loss statistics (among them trace_writer_packet_loss, packets writers gave up on midway,
 * and sequence_packet_loss, the previous_packet_dropped marks trace_processor counts as
 * traced_buf_sequence_packet_loss: not a sequence's first packet's, and only on sequences the
 * trace's last TraceStats lists in writer_stats),
 * one {@code key=value} line, so a script can compare traces without trace_processor; when slice
 * begins are in the file but trace_processor cannot read them, it says why on stderr, with the fix
 * (see {@link IncrementalStateTracker}). Reads the file as a stream: a trace of any size in
 * constant memory.
 */
public final class TraceSummary implements Subcommand {
  static final String NAME = "summary";
  private static final String USAGE = "usage: jperfetto summary FILE";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "count the events and losses in a trace file: summary FILE";
  }

  /** What a trace holds. */
  record Counts(long packets, long sliceBegins, long readableSliceBegins, long unreadableBeforeClear,
      long unreadableAfterLoss, long sliceEnds, long instants,
      long counters, long packetsAfterLoss, long chunksDiscarded, long chunksOverwritten, long abiViolations,
      long patchesFailed, long traceWriterPacketLoss, long sequencePacketLoss, long bytesWritten,
      int finalFlushOutcome) {
    /**
     * Why slice begins in the file cannot be read, in words and with the fix, one sentence per
     * cause; empty when every one can.
     */
    List<String> unreadableWhy() {
      List<String> why = new ArrayList<>();
      if (unreadableBeforeClear > 0) {
        why.add(unreadableBeforeClear + " of " + sliceBegins + " slice begins are in the file but trace_processor "
            + "cannot read them: the packets that set their sequence's incremental state (interned names, track "
            + "descriptors) are gone, as when a ring buffer wraps" + (chunksOverwritten > 0
                ? " (this one overwrote " + chunksOverwritten + " chunks)" : "")
            + (readableSliceBegins > 0
                ? "; they come before their sequence's first incremental-state clear in the file, at most one clear "
                    + "period of each thread (a shorter clear_period_ms loses less)"
                : "; a clear period keeps what follows each clear readable: incremental_state_config { "
                    + "clear_period_ms: " + ClearPeriod.DEFAULT_MS + " }"));
      }
      if (unreadableAfterLoss > 0) {
        why.add(unreadableAfterLoss + " of " + sliceBegins + " slice begins are in the file but trace_processor "
            + "cannot read them: data was lost before them on their sequence (previous_packet_dropped) and the "
            + "sequence did not clear its incremental state since; a larger buffer loses less, a clear period "
            + "recovers sooner");
      }
      return why;
    }

    String line() {
      return "packets=" + packets + " slice_begins=" + sliceBegins + " readable_slice_begins=" + readableSliceBegins
          + " slice_ends=" + sliceEnds
          + " instants=" + instants + " counters=" + counters + " previous_packet_dropped=" + packetsAfterLoss
          + " chunks_discarded=" + chunksDiscarded + " chunks_overwritten=" + chunksOverwritten
          + " abi_violations=" + abiViolations + " patches_failed=" + patchesFailed
          + " trace_writer_packet_loss=" + traceWriterPacketLoss + " sequence_packet_loss=" + sequencePacketLoss
          + " bytes_written=" + bytesWritten + " final_flush_outcome=" + finalFlushOutcome
          + " unreadable_before_clear=" + unreadableBeforeClear + " unreadable_after_loss=" + unreadableAfterLoss;
    }
  }

  @Override
  public int run(String[] args, CliContext ctx) throws IOException {
    if (args.length != 1 || args[0].startsWith("-")) {
      ctx.err().println(USAGE);
      return Jperfetto.EXIT_ERROR;
    }
    try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
      Counts counts = count(in);
      ctx.out().println(counts.line());
      for (String why : counts.unreadableWhy()) {
        ctx.err().println("jperfetto summary: " + why);
      }
    }
    return Jperfetto.EXIT_OK;
  }

  /** Reads a whole trace (a sequence of Trace.packet fields) from in. */
  static Counts count(InputStream in) throws IOException {
    Tally tally = new Tally();
    TraceFileReader.forEachPacket(in, tally::add);
    return tally.counts();
  }

  /** The counts of a trace taken one packet at a time, in file order. */
  static final class Tally {
    private final IncrementalStateTracker state = new IncrementalStateTracker();
    private long packets;
    private long begins;
    private long readableBegins;
    private long unreadableBeforeClear;
    private long unreadableAfterLoss;
    private long ends;
    private long instants;
    private long counters;
    private long afterLoss;
    private long discarded;
    private long overwritten;
    private long violations;
    private long patchesFailed;
    private long writerLoss;
    private long sequenceLoss;
    private long written;
    private int outcome;

    /** Counts p; returns whether trace_processor reads it, and if not, why. */
    IncrementalStateTracker.Verdict add(TracePacket p) {
      packets++;
      IncrementalStateTracker.Verdict verdict = state.judge(p);
      if (state.countsLoss(p)) {
        afterLoss++;
      }
      if (p.hasTrackEvent()) {
        switch (p.getTrackEvent().getType()) {
          case TYPE_SLICE_BEGIN -> {
            begins++;
            if (verdict == IncrementalStateTracker.Verdict.READABLE) {
              readableBegins++;
            } else if (verdict == IncrementalStateTracker.Verdict.BEFORE_FIRST_CLEAR) {
              unreadableBeforeClear++;
            } else {
              unreadableAfterLoss++;
            }
          }
          case TYPE_SLICE_END -> ends++;
          case TYPE_INSTANT -> instants++;
          case TYPE_COUNTER -> counters++;
          default -> { }
        }
      }
      if (p.hasTraceStats()) {
        addStats(p.getTraceStats());
      }
      return verdict;
    }

    /** The service's last stats packet is the one that counts. */
    private void addStats(TraceStats s) {
      discarded = s.getChunksDiscarded();
      overwritten = 0;
      violations = 0;
      patchesFailed = 0;
      writerLoss = 0;
      written = 0;
      for (TraceStats.BufferStats b : s.getBufferStatsList()) {
        discarded += b.getChunksDiscarded();
        overwritten += b.getChunksOverwritten();
        violations += b.getAbiViolations();
        patchesFailed += b.getPatchesFailed();
        writerLoss += b.getTraceWriterPacketLoss();
        written += b.getBytesWritten();
      }
      sequenceLoss = state.sequencePacketLoss(s);
      outcome = s.getFinalFlushOutcome().getNumber();
    }

    Counts counts() {
      return new Counts(packets, begins, readableBegins, unreadableBeforeClear, unreadableAfterLoss, ends, instants,
          counters, afterLoss, discarded, overwritten, violations, patchesFailed, writerLoss, sequenceLoss, written,
          outcome);
    }
  }
}
