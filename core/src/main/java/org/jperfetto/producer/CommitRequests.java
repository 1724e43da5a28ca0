package org.jperfetto.producer;

import com.google.protobuf.ByteString;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.protos.CommitDataRequest;

/** Turns a {@link CommitBatch} into the CommitDataRequest sent to the service. */
final class CommitRequests {
  /**
   * Chunk bytes per CommitData when chunks travel inside it: well under the 128 KiB IPC frame
   * cap, which a chunk (at most 64 KiB) plus the request's other fields must fit in.
   */
  static final int MAX_INLINE_BYTES = 96 * 1024;

  private CommitRequests() {}

  static CommitDataRequest toProto(CommitBatch batch) {
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    for (int i = 0; i < batch.moves; i++) {
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder()
          .setPage(batch.movePage[i])
          .setChunk(batch.moveChunk[i])
          .setTargetBuffer(batch.moveTargetBuffer[i]));
    }
    addPatchesAndFlush(req, batch);
    return req.build();
  }

  /**
   * Upstream's commit path without shared memory (shmem emulation, for producers on TCP): each
   * chunk to move travels in ChunksToMove.data (its header and payload, as the SMB holds it), and
   * leaves the producer's SMB at once (COMPLETE, then free), since the service cannot free it.
   * Requests are split so that none carries more than {@link #MAX_INLINE_BYTES} of chunks; the
   * patches and the flush ack ride in the last one, after every chunk they may refer to.
   */
  static List<CommitDataRequest> toProtoInline(CommitBatch batch, SharedMemoryAbi abi) {
    List<CommitDataRequest> out = new ArrayList<>();
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    long bytes = 0;
    for (int i = 0; i < batch.moves; i++) {
      long chunk = abi.tryAcquireChunkForReading(batch.movePage[i], batch.moveChunk[i]);
      if (!ChunkHandle.isValid(chunk)) {
        continue; // not complete (cannot happen for a chunk the arbiter queued)
      }
      int size = ChunkHandle.chunkSize(chunk);
      byte[] data = abi.segment().asSlice(abi.chunkOffset(chunk), size).toArray(ValueLayout.JAVA_BYTE);
      abi.releaseChunkAsFree(chunk);
      if (bytes + size > MAX_INLINE_BYTES && req.getChunksToMoveCount() > 0) {
        out.add(req.build());
        req = CommitDataRequest.newBuilder();
        bytes = 0;
      }
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder()
          .setPage(batch.movePage[i])
          .setChunk(batch.moveChunk[i])
          .setTargetBuffer(batch.moveTargetBuffer[i])
          .setData(ByteString.copyFrom(data)));
      bytes += size;
    }
    addPatchesAndFlush(req, batch);
    if (req.getChunksToMoveCount() > 0 || req.getChunksToPatchCount() > 0 || req.hasFlushRequestId()) {
      out.add(req.build());
    }
    return out;
  }

  private static void addPatchesAndFlush(CommitDataRequest.Builder req, CommitBatch batch) {
    CommitDataRequest.ChunkToPatch.Builder group = null;
    for (int i = 0; i < batch.patches; i++) {
      if (batch.startsPatchGroup(i)) {
        if (group != null) {
          req.addChunksToPatch(group);
        }
        group = CommitDataRequest.ChunkToPatch.newBuilder()
            .setWriterId(batch.patchWriterId[i])
            .setChunkId(batch.patchChunkId[i])
            .setTargetBuffer(batch.patchTargetBuffer[i]);
      }
      int data = batch.patchData[i];
      group.addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder()
          .setOffset(batch.patchOffset[i])
          .setData(ByteString.copyFrom(new byte[] {
              (byte) data, (byte) (data >>> 8), (byte) (data >>> 16), (byte) (data >>> 24)})));
      // The group's last patch decides: more patches for the chunk may have come since.
      if (batch.patchHasMore[i]) {
        group.setHasMorePatches(true);
      } else {
        group.clearHasMorePatches();
      }
    }
    if (group != null) {
      req.addChunksToPatch(group);
    }
    if (batch.flushRequestId != 0) {
      req.setFlushRequestId(batch.flushRequestId);
    }
  }
}
