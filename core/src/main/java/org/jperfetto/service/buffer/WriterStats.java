package org.jperfetto.service.buffer;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per writer of a buffer, a histogram of how full its chunks were: each complete chunk, once read to
 * its end, adds the payload bytes its fragments took (upstream's TraceBuffer writer_stats, which
 * TraceStats reports as writer_stats with chunk_payload_histogram_def). Buckets are upstream's:
 * a value goes into the first bucket whose threshold is at least the value, else into the last,
 * unbounded one.
 */
public final class WriterStats {
  /** Upper bounds of every bucket but the last (TraceStats.chunk_payload_histogram_def). */
  public static final long[] THRESHOLDS = {8, 32, 128, 512, 1024, 2048, 4096, 8192, 12288, 16384};
  public static final int BUCKETS = THRESHOLDS.length + 1;

  /** Receives one writer's histogram; the arrays are the live ones: read, do not keep. */
  @FunctionalInterface
  public interface Visitor {
    void visit(int producerId, int writerId, long[] counts, long[] sums);
  }

  private record Histogram(long[] counts, long[] sums) {}

  private final Map<Integer, Histogram> byWriter = new LinkedHashMap<>();

  void add(int producerId, int writerId, long value) {
    Histogram h = byWriter.computeIfAbsent((producerId << 16) | (writerId & 0xFFFF),
        k -> new Histogram(new long[BUCKETS], new long[BUCKETS]));
    int b = bucketOf(value);
    h.counts[b]++;
    h.sums[b] += value;
  }

  static int bucketOf(long value) {
    for (int i = 0; i < THRESHOLDS.length; i++) {
      if (value <= THRESHOLDS[i]) {
        return i;
      }
    }
    return THRESHOLDS.length;
  }

  public boolean isEmpty() {
    return byWriter.isEmpty();
  }

  /** Every writer with at least one chunk read, in the order they first were. */
  public void forEach(Visitor visitor) {
    byWriter.forEach((key, h) -> visitor.visit(key >>> 16, key & 0xFFFF, h.counts, h.sums));
  }
}
