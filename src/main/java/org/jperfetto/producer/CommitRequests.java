package org.jperfetto.producer;

import com.google.protobuf.ByteString;
import org.jperfetto.protos.CommitDataRequest;

/** Turns a {@link CommitBatch} into the CommitDataRequest sent to the service. */
final class CommitRequests {
  private CommitRequests() {}

  static CommitDataRequest toProto(CommitBatch batch) {
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    for (int i = 0; i < batch.moves; i++) {
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder()
          .setPage(batch.movePage[i])
          .setChunk(batch.moveChunk[i])
          .setTargetBuffer(batch.moveTargetBuffer[i]));
    }
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
    return req.build();
  }
}
