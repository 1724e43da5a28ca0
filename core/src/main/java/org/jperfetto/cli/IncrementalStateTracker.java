package org.jperfetto.cli;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;

/**
 * Which packets of a trace trace_processor can read, judged by their sequence's incremental state:
 * a packet that needs it (SEQ_NEEDS_INCREMENTAL_STATE) is read only when its sequence has cleared the
 * state (SEQ_INCREMENTAL_STATE_CLEARED, or the older incremental_state_cleared) and lost nothing
 * since. A packet marked previous_packet_dropped that does not also clear the state makes the
 * sequence unreadable until the next clear, as trace_processor does; so a writer that keeps
 * writing on the old state after a loss has every later packet skipped. Packets that need no
 * state are always read. Memory: three bits per sequence id, and a count per sequence that lost.
 */
final class IncrementalStateTracker {
  private static final int CLEARED = TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE;
  private static final int NEEDS = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;

  /** Whether trace_processor reads a packet, and if not, why. */
  enum Verdict {
    READABLE,
    /**
     * Its sequence has not cleared its state anywhere before it in the file: the packets that set
     * the state were overwritten (a ring buffer that wrapped) or never written.
     */
    BEFORE_FIRST_CLEAR,
    /** Packets of its sequence were lost since the last clear (previous_packet_dropped). */
    AFTER_LOSS
  }

  private final BitSet cleared = new BitSet();
  private final BitSet readable = new BitSet();
  private final BitSet seen = new BitSet();
  /** Counted losses by sequence (only sequences that lost something). */
  private final Map<Integer, Long> lossesBySequence = new HashMap<>();

  /**
   * Takes packet p in trace order; says whether its previous_packet_dropped is a loss trace_processor
   * counts. The service marks every sequence's first packet (it cannot know what came before), and
   * trace_processor counts the mark only on a later packet of the sequence. Call once per packet.
   */
  boolean countsLoss(TracePacket p) {
    int seq = p.getTrustedPacketSequenceId();
    boolean first = !seen.get(seq);
    seen.set(seq);
    boolean counts = p.hasTrustedPacketSequenceId() && !first && p.getPreviousPacketDropped() != 0;
    if (counts) {
      lossesBySequence.merge(seq, 1L, Long::sum);
    }
    return counts;
  }

  /**
   * The losses counted so far on the sequences a TraceStats lists in writer_stats, one term per
   * entry: trace_processor's traced_buf_sequence_packet_loss, summed over buffers (it reports the
   * loss only of sequences the service lists there).
   */
  long sequencePacketLoss(TraceStats stats) {
    long sum = 0;
    for (TraceStats.WriterStats w : stats.getWriterStatsList()) {
      int sequence = (int) w.getSequenceId(); // the map's keys are Integers: a Long would match none
      sum += lossesBySequence.getOrDefault(sequence, 0L);
    }
    return sum;
  }

  /** Takes packet p in trace order; says whether trace_processor would read it. */
  Verdict judge(TracePacket p) {
    int seq = p.getTrustedPacketSequenceId();
    if (p.getIncrementalStateCleared() || (p.getSequenceFlags() & CLEARED) != 0) {
      readable.set(seq);
      cleared.set(seq);
    } else if (p.getPreviousPacketDropped() != 0) {
      readable.clear(seq);
    }
    if ((p.getSequenceFlags() & NEEDS) == 0 || readable.get(seq)) {
      return Verdict.READABLE;
    }
    return cleared.get(seq) ? Verdict.AFTER_LOSS : Verdict.BEFORE_FIRST_CLEAR;
  }
}
