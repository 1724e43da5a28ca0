package org.jperfetto.producer;

import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.protos.DataSourceConfig;

/**
 * A data source's instance started with no service at all: on a private in-process 256 KiB SMB
 * whose committed chunks are freed at once, on the committing thread, set up and started the way
 * {@link TracingProducer} does it. Nothing written reaches any trace. What runs is the producer's
 * own trace point path (TraceWriter, chunks, commits): for benchmarks of what a trace point costs
 * without IPC or a service.
 *
 * <p>The SMB is a memfd mapped shared, as a service's SMB is mapped in a connected producer, so the
 * benchmarked code meets the same kind of memory segment as a real session: the JIT
 * profiles the segment's class at every access, and code warmed up on another kind is thrown away
 * when the first real chunk arrives.
 *
 * <p>{@link #pauseDrain()} makes it a service that has stopped reading: committed chunks stay
 * committed, the SMB fills and writers meet a full buffer (their drop or stall path) until
 * {@link #resumeDrain()}.
 *
 * <p>The data source must have no other instance meanwhile (a private one, typically); close
 * releases its slot.
 */
public final class DetachedInstance implements AutoCloseable {
  private static final int PAGE_SIZE = ShmSizes.DEFAULT_PAGE_SIZE;
  private final Arena arena = Arena.ofAuto(); // unmapped when unreachable: no writer can outlive it
  private final SharedMemoryArbiter arbiter;
  private final SharedMemoryAbi abi;
  private final DataSource<?> dataSource;
  private final int index;
  private CommitBatch spare = new CommitBatch();
  private long chunksFreed;
  private boolean drainPaused;

  private <S> DetachedInstance(DataSource<S> dataSource, DataSourceConfig config, long smbSize) {
    if (smbSize < PAGE_SIZE || smbSize % PAGE_SIZE != 0) {
      throw new IllegalArgumentException("SMB size must be a positive multiple of " + PAGE_SIZE + ": " + smbSize);
    }
    MemorySegment smb = mapSmb(smbSize);
    abi = new SharedMemoryAbi(smb, PAGE_SIZE);
    arbiter = new SharedMemoryArbiter(abi, new SharedMemoryArbiter.CommitSink() {
      @Override
      public void commitPending() {
        freeCommitted();
      }
    });
    this.dataSource = dataSource;
    DataSourceInstance<S> instance = new DataSourceInstance<>(1, 0, config);
    index = instance.index();
    dataSource.setUp(instance, arbiter, config.getTargetBuffer());
    instance.state(dataSource.handler().onSetup(instance));
    dataSource.start(instance);
  }

  private MemorySegment mapSmb(long size) {
    try {
      int fd = MemFd.create("jperfetto-detached-smb", size);
      try {
        return SharedMapping.map(fd, size, arena);
      } finally {
        Fds.closeQuietly(fd);
      }
    } catch (ErrnoException e) {
      throw new UncheckedIOException("detached instance: mapping a private SMB failed", e);
    }
  }

  /** Starts dataSource's instance 0 with config (its handler's onSetup and onStart run here). */
  public static DetachedInstance start(DataSource<?> dataSource, DataSourceConfig config) {
    return new DetachedInstance(dataSource, config, ShmSizes.DEFAULT_SIZE);
  }

  /** As {@link #start(DataSource, DataSourceConfig)}, on an SMB of smbSize bytes (whole 4 KiB pages). */
  public static DetachedInstance start(DataSource<?> dataSource, DataSourceConfig config, long smbSize) {
    return new DetachedInstance(dataSource, config, smbSize);
  }

  /** From now on committed chunks stay committed, as if the service had stopped reading. */
  public synchronized void pauseDrain() {
    drainPaused = true;
  }

  /** Frees every chunk committed meanwhile, and goes on freeing them as they are committed. */
  public void resumeDrain() {
    synchronized (this) {
      drainPaused = false;
    }
    freeCommitted();
  }

  private synchronized void freeCommitted() {
    if (drainPaused) {
      return; // the arbiter keeps the commits pending until resumeDrain
    }
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

  public synchronized long chunksFreed() {
    return chunksFreed;
  }

  /** Stops the instance (no more writes go to it) and frees its slot. */
  @Override
  public void close() {
    dataSource.release(index);
  }
}
