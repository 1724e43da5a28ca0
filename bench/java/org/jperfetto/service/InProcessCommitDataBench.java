package org.jperfetto.service;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.jperfetto.wire.Varints;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CommitData handling in-process: a producer with a 256 KiB SMB of 4 KiB pages (Div1: one chunk
 * per page) commits Complete chunks that hold ~100-byte TrackEvent slice packets; the service
 * checks each chunk through the untrusted reader, copies it into a 64 MiB ring buffer and frees it.
 * One operation is one chunk, so the score is chunks/s (x 4080 payload bytes for B/s).
 * chunksPerRequest=1 is one CommitData per chunk, 64 the whole SMB in one request (what a
 * producer's batched commits look like). The producer side per chunk is only the header
 * (acquire + release as Complete): the payload written once at setup stays in place.
 *
 * <pre>
 * ./mvnw -B -Pbench verify -Djmh.args="InProcessCommitDataBench -prof gc -f 1 -wi 3 -w 1s -i 5 -r 1s"
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
public class InProcessCommitDataBench {
  static final int PAGE = 4096;
  static final int PAGES = 64;

  @Param({"1", "64"})
  int chunksPerRequest;

  private TracingService service;
  private ProducerEndpoint producer;
  private ConsumerEndpoint consumer;
  private SharedMemoryAbi abi;
  private CommitDataRequest[] requests;
  private short packetsHeader;
  private int nextChunkId;

  /** Everything inline on the benchmark thread. */
  static final class InlineRunner implements TaskRunner {
    @Override
    public void post(Runnable task) {
      task.run();
    }

    @Override
    public Cancellable postDelayed(Runnable task, long delayMs) {
      return () -> { }; // periodic snapshots and timers never fire during the run
    }

    @Override
    public boolean isOnRunnerThread() {
      return true;
    }
  }

  /** Keeps the SMB it is handed; ignores everything else. */
  static final class Producer implements ProducerCallbacks {
    SharedMemory smb;
    int targetBuffer;

    @Override
    public void setupTracing(SharedMemory memory, int pageSizeKb) {
      smb = memory;
    }

    @Override
    public void setupDataSource(long instanceId, DataSourceConfig config) {}

    @Override
    public void startDataSource(long instanceId, DataSourceConfig config) {
      targetBuffer = config.getTargetBuffer();
    }

    @Override
    public void stopDataSource(long instanceId) {}

    @Override
    public void flush(long requestId, long[] ids, long flags) {}

    @Override
    public void clearIncrementalState(long[] ids) {}

    @Override
    public void onDisconnectedByService(String reason) {}
  }

  static final class Consumer implements ConsumerCallbacks {
    @Override
    public void onTracingDisabled(String error) {}

    @Override
    public void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore) {}
  }

  @Setup(Level.Trial)
  public void setUp() {
    service = new TracingService(new InlineRunner(), SharedMemory.arenaFactory());
    Producer callbacks = new Producer();
    producer = service.connectProducer(callbacks, new ClientIdentity(1000, 1), "bench", PAGES * PAGE,
        PAGE, Optional.empty(), "bench");
    producer.registerDataSource(DataSourceDescriptor.newBuilder().setName("track_event").build());
    consumer = service.connectConsumer(new Consumer(), 1000);
    String err = consumer.enableTracing(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(64 * 1024))
        .addDataSources(TraceConfig.DataSource.newBuilder()
            .setConfig(DataSourceConfig.newBuilder().setName("track_event")))
        .build(), Optional.empty());
    if (!err.isEmpty()) {
      throw new IllegalStateException(err);
    }
    int buffer = callbacks.targetBuffer;
    producer.registerTraceWriter(1, buffer);
    abi = new SharedMemoryAbi(callbacks.smb.segment(), PAGE);
    int packets = 0;
    for (int page = 0; page < PAGES; page++) {
      abi.tryPartitionPage(page, PageLayout.DIV1);
      long h = abi.tryAcquireChunkForWriting(page, 0, nextChunkId++, 1, (short) 0);
      packets = fillPayload(abi.segment(), abi.payloadOffset(h), ChunkHandle.payloadSize(h));
      abi.releaseChunkAsComplete(h);
    }
    packetsHeader = ChunkHeader.packets(packets, 0);
    requests = new CommitDataRequest[PAGES / chunksPerRequest];
    for (int r = 0; r < requests.length; r++) {
      CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
      for (int i = 0; i < chunksPerRequest; i++) {
        req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder()
            .setPage(r * chunksPerRequest + i).setChunk(0).setTargetBuffer(buffer));
      }
      requests[r] = req.build();
    }
    for (CommitDataRequest r : requests) {
      producer.commitData(r, null); // frees the pages: from here on only the headers change
    }
    commitChunks();
    long written = consumer.traceStats().getBufferStats(0).getChunksWritten();
    if (service.producerAbiViolations() != 0 || written != 2 * PAGES) {
      throw new IllegalStateException("the bench's chunks were refused: written=" + written);
    }
  }

  /** Slice-begin packets with a debug annotation, 4-byte sizes; returns how many fit. */
  static int fillPayload(MemorySegment smb, long at, long size) {
    long end = at + size;
    int n = 0;
    for (long i = 0; ; i++) {
      byte[] p = TracePacket.newBuilder().setTimestamp(1_000_000_000L + i * 1000)
          .setTrustedPacketSequenceId(1)
          .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN)
              .setTrackUuid(0x1234_5678L).addCategoryIids(1).setNameIid(2)
              .addDebugAnnotations(DebugAnnotation.newBuilder().setNameIid(3).setIntValue(i)))
          .setSequenceFlags(2).build().toByteArray();
      if (at + 4 + p.length > end) {
        return n;
      }
      int len = p.length;
      Varints.writeRedundant(smb, at, len);
      MemorySegment.copy(p, 0, smb, ValueLayout.JAVA_BYTE, at + 4, len);
      at += 4 + len;
      n++;
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    consumer.disconnect();
    producer.disconnect();
  }

  /** Marks every page's chunk Complete under a new id (the payload is already there), commits. */
  @Benchmark
  @OperationsPerInvocation(PAGES)
  public void commitChunks() {
    for (int page = 0; page < PAGES; page++) {
      abi.tryPartitionPage(page, PageLayout.DIV1);
      long h = abi.tryAcquireChunkForWriting(page, 0, nextChunkId++, 1, packetsHeader);
      abi.releaseChunkAsComplete(h);
    }
    for (CommitDataRequest r : requests) {
      producer.commitData(r, null);
    }
  }
}
