package org.jperfetto.os;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * What a virtual thread's slice begin pays to name its carrier: one gettid(2) through a critical
 * downcall ({@link Threads#currentTid}). Should allocate 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ThreadsBench {
  @Benchmark
  public int gettid() {
    return Threads.currentTid();
  }
}
