package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * Small InvokeMethod calls over AF_UNIX between an IpcClient and an IpcHost in one JVM: the
 * round-trip latency of one call at a time (SampleTime gives p50/p99) and the throughput of
 * pipelined calls (64 in flight).
 */
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class IpcRoundTripBench {
  private static final int PIPELINE = 64;

  private Path dir;
  private IpcHost host;
  private IpcClient client;
  private BoundService service;
  private final ByteString args = ByteString.copyFrom(new byte[16]);
  @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type is made raw
  private final CompletableFuture<Reply>[] inFlight = new CompletableFuture[PIPELINE];

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("ipc-bench");
    String path = dir.resolve("bench.sock").toString();
    host = IpcHost.start(path, List.of(ServiceDefinition.builder("Bench")
        .method("Echo", call -> call.reply(call.args())).build()));
    client = IpcClient.connect(path);
    service = client.bind("Bench").get(10, TimeUnit.SECONDS);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    client.close();
    host.close();
    Files.deleteIfExists(dir.resolve("bench.sock"));
    Files.deleteIfExists(dir);
  }

  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Reply roundTrip() throws Exception {
    return service.invoke("Echo", args).get();
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(PIPELINE)
  public Reply pipelined() throws Exception {
    for (int i = 0; i < PIPELINE; i++) {
      inFlight[i] = service.invoke("Echo", args);
    }
    Reply last = null;
    for (int i = 0; i < PIPELINE; i++) {
      last = inFlight[i].get();
    }
    return last;
  }
}
