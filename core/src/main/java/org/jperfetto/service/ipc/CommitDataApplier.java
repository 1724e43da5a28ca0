package org.jperfetto.service.ipc;

import java.lang.foreign.MemorySegment;
import org.jperfetto.ipc.wire.CommitDataDecoder;
import org.jperfetto.service.ProducerEndpoint;
import org.jperfetto.service.buffer.PatchBatch;

/**
 * Applies a CommitDataRequest read in place by {@link CommitDataDecoder} to a producer's endpoint:
 * the decoder's {@link CommitDataDecoder.Sink} for the service, gathering each chunk's patches into
 * one reused {@link PatchBatch}, so the path allocates nothing. Not thread-safe: one per service
 * thread.
 */
final class CommitDataApplier implements CommitDataDecoder.Sink {
  private final CommitDataDecoder decoder = new CommitDataDecoder();
  private final PatchBatch patches = new PatchBatch();
  private ProducerEndpoint endpoint;

  /**
   * Applies the CommitDataRequest at [offset, offset + length) of args to endpoint as
   * {@link ProducerEndpoint#commitData} would, if the decoder takes it as it is; returns false,
   * having done nothing, when it does not (see {@link CommitDataDecoder#apply}).
   */
  boolean apply(MemorySegment args, long offset, int length, ProducerEndpoint target) {
    endpoint = target;
    patches.clear();
    try {
      return decoder.apply(args, offset, length, this);
    } finally {
      endpoint = null;
      patches.clear();
    }
  }

  @Override
  public boolean moveChunk(int page, int chunk, int targetBuffer) {
    return endpoint.commitChunk(page, chunk, targetBuffer);
  }

  @Override
  public void patch(long offset, MemorySegment data, long dataOffset, int dataLength) {
    patches.add(offset, data, dataOffset, dataLength);
  }

  @Override
  public void endChunkPatches(int targetBuffer, int writerId, int chunkId, boolean hasMorePatches) {
    endpoint.patchChunk(targetBuffer, writerId, chunkId, patches, hasMorePatches);
    patches.clear();
  }

  @Override
  public void endCommit(long flushRequestId) {
    endpoint.endCommit(flushRequestId);
  }
}
