package org.jperfetto.producer;

import static org.jperfetto.ipc.wire.CommitDataTags.CHUNKS_TO_MOVE;
import static org.jperfetto.ipc.wire.CommitDataTags.CHUNKS_TO_PATCH;
import static org.jperfetto.ipc.wire.CommitDataTags.FLUSH_REQUEST_ID;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_CHUNK;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_PAGE;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_TARGET_BUFFER;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_CHUNK_ID;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_DATA;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_HAS_MORE;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_OFFSET;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_PATCHES;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_TARGET_BUFFER;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_WRITER_ID;

import org.jperfetto.abi.Varints;

/**
 * Encodes a {@link CommitBatch} as CommitDataRequest bytes into an array it reuses, so a commit
 * costs no message objects: byte for byte what protobuf-java writes for
 * {@link CommitRequests#toProto} (fields in number order, every uint32 of a move or patch group
 * present, has_more_patches only when true, flush_request_id only when non-zero). Not thread-safe:
 * one per connection, used under its drain lock.
 *
 * <pre>
 * CommitDataRequest
 *   1 chunks_to_move   (repeated) { 1 page, 2 chunk, 3 target_buffer }
 *   2 chunks_to_patch  (repeated) { 1 target_buffer, 2 writer_id, 3 chunk_id,
 *                                   4 patches (repeated) { 1 offset, 2 data: 4 bytes LE },
 *                                   5 has_more_patches }
 *   3 flush_request_id
 * </pre>
 */
final class CommitDataEncoder {
  private static final int PATCH_DATA_SIZE = 4;

  private byte[] out = new byte[512];
  /** Size of each patch group's message, from the sizing pass. */
  private int[] groupSizes = new int[8];

  /** The array {@link #encode} wrote into (valid up to the length it returned). */
  byte[] buffer() {
    return out;
  }

  /** Writes batch's request at buffer()[0..] and returns its length. */
  int encode(CommitBatch batch) {
    int size = 0;
    for (int i = 0; i < batch.moves; i++) {
      size += field(moveSize(batch, i));
    }
    int groups = 0;
    for (int i = 0; i < batch.patches; ) {
      int end = groupEnd(batch, i);
      if (groups == groupSizes.length) {
        groupSizes = java.util.Arrays.copyOf(groupSizes, groups * 2);
      }
      int g = groupSize(batch, i, end);
      groupSizes[groups++] = g;
      size += field(g);
      i = end;
    }
    if (batch.flushRequestId != 0) {
      size += 1 + Varints.size(batch.flushRequestId);
    }
    if (out.length < size) {
      out = new byte[Math.max(size, out.length * 2)];
    }
    byte[] b = out;
    int at = 0;
    for (int i = 0; i < batch.moves; i++) {
      b[at++] = CHUNKS_TO_MOVE;
      at = Varints.put(b, at, moveSize(batch, i));
      at = uint32(b, at, MOVE_PAGE, batch.movePage[i]);
      at = uint32(b, at, MOVE_CHUNK, batch.moveChunk[i]);
      at = uint32(b, at, MOVE_TARGET_BUFFER, batch.moveTargetBuffer[i]);
    }
    int group = 0;
    for (int i = 0; i < batch.patches; ) {
      int end = groupEnd(batch, i);
      b[at++] = CHUNKS_TO_PATCH;
      at = Varints.put(b, at, groupSizes[group++]);
      at = uint32(b, at, PATCH_TARGET_BUFFER, batch.patchTargetBuffer[i]);
      at = uint32(b, at, PATCH_WRITER_ID, batch.patchWriterId[i]);
      at = uint32(b, at, PATCH_CHUNK_ID, batch.patchChunkId[i]);
      for (int p = i; p < end; p++) {
        b[at++] = PATCH_PATCHES;
        at = Varints.put(b, at, patchSize(batch, p));
        at = uint32(b, at, PATCH_OFFSET, batch.patchOffset[p]);
        b[at++] = PATCH_DATA;
        b[at++] = PATCH_DATA_SIZE;
        int data = batch.patchData[p];
        b[at++] = (byte) data;
        b[at++] = (byte) (data >>> 8);
        b[at++] = (byte) (data >>> 16);
        b[at++] = (byte) (data >>> 24);
      }
      if (batch.patchHasMore[end - 1]) {
        b[at++] = PATCH_HAS_MORE;
        b[at++] = 1;
      }
      i = end;
    }
    if (batch.flushRequestId != 0) {
      b[at++] = FLUSH_REQUEST_ID;
      at = Varints.put(b, at, batch.flushRequestId);
    }
    if (at != size) {
      throw new IllegalStateException("CommitDataRequest sized " + size + " bytes, wrote " + at);
    }
    return size;
  }

  /** The index after the last patch of the group that starts at patch i. */
  private static int groupEnd(CommitBatch batch, int i) {
    int end = i + 1;
    while (end < batch.patches && !batch.startsPatchGroup(end)) {
      end++;
    }
    return end;
  }

  private static int moveSize(CommitBatch batch, int i) {
    return 3 + uint32Size(batch.movePage[i]) + uint32Size(batch.moveChunk[i])
        + uint32Size(batch.moveTargetBuffer[i]);
  }

  private static int groupSize(CommitBatch batch, int start, int end) {
    int size = 3 + uint32Size(batch.patchTargetBuffer[start]) + uint32Size(batch.patchWriterId[start])
        + uint32Size(batch.patchChunkId[start]);
    for (int p = start; p < end; p++) {
      size += field(patchSize(batch, p));
    }
    return batch.patchHasMore[end - 1] ? size + 2 : size;
  }

  private static int patchSize(CommitBatch batch, int p) {
    return 1 + uint32Size(batch.patchOffset[p]) + 2 + PATCH_DATA_SIZE;
  }

  /** Tag, length and body of a length-delimited field whose body is bodySize bytes. */
  private static int field(int bodySize) {
    return 1 + Varints.size(bodySize) + bodySize;
  }

  private static int uint32Size(int v) {
    return Varints.size(Integer.toUnsignedLong(v));
  }

  private static int uint32(byte[] b, int at, int tag, int v) {
    b[at++] = (byte) tag;
    return Varints.put(b, at, Integer.toUnsignedLong(v));
  }
}
