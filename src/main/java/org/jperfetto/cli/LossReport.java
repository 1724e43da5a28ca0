package org.jperfetto.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The loss statistics of a trace in words: what each non-zero one means for the reader (are events
 * missing, and which), and what to change to lose less. A trace that lost nothing says so.
 */
final class LossReport {
  private static final int FINAL_FLUSH_FAILED = 2;

  private LossReport() {}

  /** One sentence per loss the counts show; "No data was lost." when there is none. */
  static List<String> sentences(TraceSummary.Counts c) {
    List<String> out = new ArrayList<>();
    if (c.chunksOverwritten() > 0) {
      out.add("The ring buffer wrapped: " + c.chunksOverwritten() + " chunks of the oldest data were overwritten "
          + "by newer data. This is what a ring buffer is for (the trace keeps the last part); a larger buffer "
          + "keeps more of the start.");
    }
    if (c.chunksDiscarded() > 0) {
      out.add(c.chunksDiscarded() + " chunks arrived after the buffer was full (fill_policy: DISCARD) and were "
          + "dropped: the trace stops early. A larger buffer, a shorter trace or a RING_BUFFER keeps more.");
    }
    if (c.packetsAfterLoss() > 0) {
      out.add(c.packetsAfterLoss() + " times a writer lost packets before the next one it wrote "
          + "(previous_packet_dropped): its shared memory had no free chunk, or the service dropped its data. "
          + "Events are missing there. A larger shared memory buffer (shm_size_kb) or buffer loses less.");
    }
    if (c.traceWriterPacketLoss() > 0) {
      out.add(c.traceWriterPacketLoss() + " packets were given up midway by their writer (trace_writer_packet_loss):"
          + " they are missing.");
    }
    if (c.patchesFailed() > 0) {
      out.add(c.patchesFailed() + " packets could not be completed because their chunk had already left the "
          + "buffer (patches_failed): they are missing. A larger buffer or more frequent flushes helps.");
    }
    if (c.abiViolations() > 0) {
      out.add(c.abiViolations() + " chunks broke the shared-memory protocol and were dropped (abi_violations): a "
          + "producer is faulty or hostile; its events there are missing.");
    }
    if (c.finalFlushOutcome() == FINAL_FLUSH_FAILED) {
      out.add("Some producers did not answer the final flush: the last events they held may be missing.");
    }
    out.addAll(c.unreadableWhy());
    if (out.isEmpty()) {
      out.add("No data was lost.");
    }
    return out;
  }
}
