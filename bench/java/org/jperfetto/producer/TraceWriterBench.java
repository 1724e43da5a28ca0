package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.DataSourceConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A small TracePacket (timestamp and a nested message with two varints) written through a
 * TraceWriter into a real 256 KiB SMB, with a fake service that frees committed chunks at once on
 * the writing thread (so chunk acquisition, commit batching and release are in the figure). Also
 * the same packet through {@link DataSource#trace}, and a trace call on a disabled data source.
 * Run with -prof gc: the target is 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TraceWriterBench {
  private static final int TIMESTAMP = 8;
  private static final int FOR_TESTING = 900;

  private Arena arena;
  private DrainingSink sink;
  private TraceWriter writer;
  private DataSource<Void> enabled;
  private DataSource<Void> disabled;
  private long timestamp;
  static long counter;

  @Setup(Level.Trial)
  public void setUp() {
    arena = Arena.ofShared();
    sink = DrainingSink.over(arena.allocate(256 * 1024, 4096), 4096);
    writer = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.STALL);
    enabled = DataSource.named("bench.enabled");
    DataSourceInstance<Void> instance = new DataSourceInstance<>(1, 0,
        DataSourceConfig.newBuilder().setName("bench.enabled").setTargetBuffer(1).build());
    enabled.setUp(instance, sink.arbiter, 1);
    enabled.activate(0);
    disabled = DataSource.named("bench.disabled");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    writer.close();
    System.out.printf("%n[chunks committed and freed: %d]%n", sink.chunks);
    arena.close();
  }

  @Benchmark
  public long smallPacket() {
    ProtoWriter p = writer.newTracePacket();
    p.appendVarInt(TIMESTAMP, timestamp += 1234);
    p.beginNested(FOR_TESTING);
    p.appendVarInt(1, timestamp);
    p.appendVarInt(2, 42);
    p.endNested();
    writer.finishTracePacket();
    return timestamp;
  }

  private static void writeSmall(TraceContext<Void> ctx) {
    long ts = ++counter;
    ProtoWriter p = ctx.newTracePacket();
    p.appendVarInt(TIMESTAMP, ts);
    p.beginNested(FOR_TESTING);
    p.appendVarInt(1, ts);
    p.appendVarInt(2, 42);
    p.endNested();
  }

  @Benchmark
  public long smallPacketViaDataSource() {
    enabled.trace(TraceWriterBench::writeSmall);
    return counter;
  }

  @Benchmark
  public long disabledDataSource() {
    disabled.trace(TraceWriterBench::writeSmall);
    return counter;
  }
}
