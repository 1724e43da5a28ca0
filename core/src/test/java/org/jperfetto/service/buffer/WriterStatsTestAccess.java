package org.jperfetto.service.buffer;

/** Package access to {@link WriterStats} for tests in other packages. */
public final class WriterStatsTestAccess {
  private WriterStatsTestAccess() {}

  public static int bucketOf(long value) {
    return WriterStats.bucketOf(value);
  }
}
