package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.DataSourceConfig;

/**
 * No service at all, for benchmarks of layers above the producer (TrackEvent): one instance of a
 * data source started on an in-process 256 KiB SMB whose committed chunks are freed at once, on
 * the committing thread, the way {@link TracingProducer} would set it up and start it. What a
 * trace point costs is then the trace point, not the IPC or a service. (Not to be confused with
 * org.jperfetto.tracing.InProcessTracing, which embeds a real service.)
 */
public final class FreeOnCommitSmb implements AutoCloseable {
  private final Arena arena = Arena.ofShared();
  private final SharedMemoryArbiter arbiter;
  private final SharedMemoryAbi abi;
  private CommitBatch spare = new CommitBatch();
  private long chunksFreed;

  private <S> FreeOnCommitSmb(DataSource<S> dataSource, DataSourceConfig config) {
    MemorySegment smb = arena.allocate(256 * 1024, 4096);
    abi = new SharedMemoryAbi(smb, 4096);
    arbiter = new SharedMemoryArbiter(new SharedMemoryAbi(smb, 4096), new SharedMemoryArbiter.CommitSink() {
      @Override
      public void commitPending() {
        freeCommitted();
      }
    });
    DataSourceInstance<S> instance = new DataSourceInstance<>(1, 0, config);
    dataSource.setUp(instance, arbiter, config.getTargetBuffer());
    instance.state(dataSource.handler().onSetup(instance));
    dataSource.handler().onStart(instance);
    dataSource.activate(0);
  }

  /** Starts dataSource with config (its handler's onSetup and onStart run here). */
  public static FreeOnCommitSmb start(DataSource<?> dataSource, DataSourceConfig config) {
    return new FreeOnCommitSmb(dataSource, config);
  }

  private void freeCommitted() {
    // The least a service does to free a chunk (acquire it for reading, release it as free): the
    // real one also validates and copies it, on its own thread, which is not the trace point's cost.
    CommitBatch batch = arbiter.drainTo(spare);
    for (int i = 0; i < batch.moves; i++) {
      long chunk = abi.tryAcquireChunkForReading(batch.movePage[i], batch.moveChunk[i]);
      if (ChunkHandle.isValid(chunk)) {
        abi.releaseChunkAsFree(chunk);
        chunksFreed++;
      }
    }
    spare = batch;
  }

  public long chunksFreed() {
    return chunksFreed;
  }

  @Override
  public void close() {
    arena.close();
  }
}
