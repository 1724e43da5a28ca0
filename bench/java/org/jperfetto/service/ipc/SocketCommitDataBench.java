package org.jperfetto.service.ipc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * CommitData handled by jtraced over a real producer socket: each operation is one ~1 KiB chunk
 * (a DIV4 chunk of a 4 KiB page holding one packet) written into the SMB, then committed in
 * batches of {@link #BATCH} with one CommitData round trip, copied into a 32 MiB ring buffer.
 * The score is chunks per second.
 */
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SocketCommitDataBench {
  static final int BATCH = 32;

  private Path dir;
  private ServiceHost host;
  private SocketProducer producer;
  private TracingConsumer consumer;
  private SmbWriter writer;
  private final byte[] packet = new byte[1000];

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("commit-bench");
    String p = dir.resolve("p.sock").toString();
    host = ServiceHost.start(ServiceHost.Options.of(p, dir.resolve("c.sock").toString()));
    producer = SocketProducer.connect(p, "bench", "bench.ds");
    consumer = TracingConsumer.connect(host.consumerSocket());
    consumer.enableTracing(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(32 * 1024))
        .addDataSources(TraceConfig.DataSource.newBuilder()
            .setConfig(DataSourceConfig.newBuilder().setName("bench.ds")))
        .build());
    writer = producer.startedWriter(1);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    consumer.disableTracing().get(10, TimeUnit.SECONDS);
    consumer.close();
    producer.close();
    host.close();
    Files.deleteIfExists(dir);
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public void commitChunks() throws Exception {
    for (int i = 0; i < BATCH; i++) {
      if (!writer.write(packet, false)) {
        throw new IllegalStateException("SMB full: the service did not free committed chunks");
      }
    }
    producer.commit();
  }
}
