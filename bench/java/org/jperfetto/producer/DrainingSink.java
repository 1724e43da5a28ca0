package org.jperfetto.producer;

import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.ChunkReadResult;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.UntrustedChunkReader;
import org.jperfetto.ipc.wire.CommitBatch;

/**
 * A fake service for writer benchmarks: takes each commit batch on the committing thread and frees
 * its chunks at once, no protobuf involved, so chunk acquisition, commit batching and release are
 * in a benchmark's figure but no service work is.
 */
final class DrainingSink implements SharedMemoryArbiter.CommitSink {
  final SharedMemoryArbiter arbiter;
  private final UntrustedChunkReader reader;
  private CommitBatch spare = new CommitBatch();
  long chunks;

  private DrainingSink(MemorySegment smb, int pageSize) {
    this.arbiter = new SharedMemoryArbiter(new SharedMemoryAbi(smb, pageSize), this);
    this.reader = new UntrustedChunkReader(new SharedMemoryAbi(smb, pageSize));
  }

  /** A sink and its arbiter over smb, cut in pages of pageSize. */
  static DrainingSink over(MemorySegment smb, int pageSize) {
    return new DrainingSink(smb, pageSize);
  }

  @Override
  public void commitPending() {
    CommitBatch batch = arbiter.drainTo(spare);
    for (int i = 0; i < batch.moves; i++) {
      if (reader.acquireCommitted(batch.movePage[i], batch.moveChunk[i]) == ChunkReadResult.OK) {
        reader.releaseAsFree();
        chunks++;
      }
    }
    spare = batch;
  }
}
