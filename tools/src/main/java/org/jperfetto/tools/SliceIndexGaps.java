package org.jperfetto.tools;

import java.util.BitSet;

/**
 * Where a numbered workload lost its slices: for traces of the reference burst (docs/performance.md),
 * whose slice begins carry their index as an integer debug annotation, the indices missing from
 * the trace say at which point of the burst the service or the producer dropped data. Collects
 * indices (any order, repeats allowed) and reports the missing ones as runs. Memory: one bit per
 * index up to the largest seen.
 */
final class SliceIndexGaps {
  /** Parts of the index range {@link Report#lostPerPart} divides it into (twentieths: 5 % each). */
  static final int PARTS = 20;
  /** Indices at or above this are ignored: no reference burst is that long, and a bitmap of it would be. */
  static final long MAX_INDEX = 1L << 31;

  private final BitSet seen = new BitSet();
  private long ignored;

  /** Records the index of one slice begin (negative or too large: counted as ignored). */
  void add(long index) {
    if (index < 0 || index >= MAX_INDEX) {
      ignored++;
      return;
    }
    seen.set((int) index);
  }

  /**
   * The missing indices below expected (0: up to the largest index seen), as runs.
   *
   * @param expected how many slices the workload emitted, or 0 when unknown
   */
  Report report(long expected) {
    long n = expected > 0 ? Math.min(expected, MAX_INDEX) : seen.length();
    int total = (int) n;
    int present = seen.get(0, total).cardinality();
    int gaps = 0;
    int largest = 0;
    int firstGapStart = -1;
    int[] lostPerPart = new int[PARTS];
    for (int from = seen.nextClearBit(0); from < total; ) {
      int to = Math.min(total, nextSetOrEnd(from));
      gaps++;
      largest = Math.max(largest, to - from);
      if (firstGapStart < 0) {
        firstGapStart = from;
      }
      for (int i = from; i < to; ) { // spread the run over the parts it spans
        int part = part(i, total);
        int partEnd = Math.min(to, partStart(part + 1, total));
        lostPerPart[part] += partEnd - i;
        i = partEnd;
      }
      from = to >= total ? total : seen.nextClearBit(to);
    }
    return new Report(total, total - present, gaps, largest, firstGapStart, lostPerPart, ignored);
  }

  private int nextSetOrEnd(int from) {
    int next = seen.nextSetBit(from);
    return next < 0 ? Integer.MAX_VALUE : next;
  }

  private static int part(int index, int total) {
    return (int) ((long) index * PARTS / total);
  }

  /** The first index of part p (the smallest i with part(i) == p). */
  private static int partStart(int p, int total) {
    return (int) (((long) p * total + PARTS - 1) / PARTS);
  }

  /**
   * What was missing.
   *
   * @param indices the index range looked at: 0 to indices - 1
   * @param missing indices in that range no slice carried
   * @param gaps runs of consecutive missing indices
   * @param largestGap the longest run
   * @param firstGapStart the first missing index, -1 if none
   * @param lostPerPart missing indices in each twentieth of the range
   * @param ignored indices out of range (negative or huge)
   */
  record Report(int indices, int missing, int gaps, int largestGap, int firstGapStart, int[] lostPerPart,
      long ignored) {
    /** key=value fields, for the report line. */
    String fields() {
      StringBuilder parts = new StringBuilder();
      for (int i = 0; i < lostPerPart.length; i++) {
        if (i > 0) {
          parts.append(',');
        }
        parts.append(lostPerPart[i]);
      }
      return "indexed_slices=" + indices + " missing_indices=" + missing + " gaps=" + gaps
          + " largest_gap=" + largestGap + " first_gap_at=" + firstGapStart + " missing_per_twentieth="
          + parts + (ignored > 0 ? " ignored_indices=" + ignored : "");
    }
  }
}
