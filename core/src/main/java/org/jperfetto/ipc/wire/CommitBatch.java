package org.jperfetto.ipc.wire;

import java.util.Arrays;

/**
 * One CommitData's worth of work, as the producer's SharedMemoryArbiter collects it: the chunks to
 * move and the patches, in primitive arrays so that collecting them allocates nothing. Reused: the
 * arbiter swaps its pending batch with an empty one. {@link CommitDataEncoder} writes it as a
 * CommitDataRequest. The fields are the producer's to fill (this package is internal to the module).
 */
public final class CommitBatch {
  // chunks_to_move
  public int moves;
  public int[] movePage = new int[16];
  public int[] moveChunk = new int[16];
  public int[] moveTargetBuffer = new int[16];
  public long movedBytes;

  // chunks_to_patch, one entry per 4-byte patch; consecutive entries of the same (writer, chunk)
  // form one ChunkToPatch. patchHasMore marks the last entry of a group whose chunk has more
  // patches to come in a later batch.
  public int patches;
  public int[] patchWriterId = new int[8];
  public int[] patchChunkId = new int[8];
  public int[] patchTargetBuffer = new int[8];
  public int[] patchOffset = new int[8];
  public int[] patchData = new int[8];
  public boolean[] patchHasMore = new boolean[8];

  /** flush_request_id to ack, or 0 for none. */
  public long flushRequestId;

  public boolean isEmpty() {
    return moves == 0 && patches == 0 && flushRequestId == 0;
  }

  public void addMove(int page, int chunk, int targetBuffer, int chunkSize) {
    if (moves == movePage.length) {
      int n = moves * 2;
      movePage = Arrays.copyOf(movePage, n);
      moveChunk = Arrays.copyOf(moveChunk, n);
      moveTargetBuffer = Arrays.copyOf(moveTargetBuffer, n);
    }
    movePage[moves] = page;
    moveChunk[moves] = chunk;
    moveTargetBuffer[moves] = targetBuffer;
    moves++;
    movedBytes += chunkSize;
  }

  public void addPatch(int writerId, int chunkId, int targetBuffer, int offset, int data) {
    if (patches == patchWriterId.length) {
      int n = patches * 2;
      patchWriterId = Arrays.copyOf(patchWriterId, n);
      patchChunkId = Arrays.copyOf(patchChunkId, n);
      patchTargetBuffer = Arrays.copyOf(patchTargetBuffer, n);
      patchOffset = Arrays.copyOf(patchOffset, n);
      patchData = Arrays.copyOf(patchData, n);
      patchHasMore = Arrays.copyOf(patchHasMore, n);
    }
    patchWriterId[patches] = writerId;
    patchChunkId[patches] = chunkId;
    patchTargetBuffer[patches] = targetBuffer;
    patchOffset[patches] = offset;
    patchData[patches] = data;
    patchHasMore[patches] = false;
    patches++;
  }

  /** Appends every move and patch of other (its flush ack is not taken). */
  public void appendFrom(CommitBatch other) {
    for (int i = 0; i < other.moves; i++) {
      addMove(other.movePage[i], other.moveChunk[i], other.moveTargetBuffer[i], 0);
    }
    movedBytes += other.movedBytes;
    for (int i = 0; i < other.patches; i++) {
      addPatch(other.patchWriterId[i], other.patchChunkId[i], other.patchTargetBuffer[i], other.patchOffset[i],
          other.patchData[i]);
      patchHasMore[patches - 1] = other.patchHasMore[i];
    }
  }

  /** Whether patch i starts a new ChunkToPatch (differs in writer or chunk from patch i - 1). */
  public boolean startsPatchGroup(int i) {
    return i == 0 || patchWriterId[i] != patchWriterId[i - 1] || patchChunkId[i] != patchChunkId[i - 1];
  }

  public void clear() {
    moves = 0;
    movedBytes = 0;
    patches = 0;
    flushRequestId = 0;
  }
}
