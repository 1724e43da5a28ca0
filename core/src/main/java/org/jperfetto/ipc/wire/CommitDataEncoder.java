package org.jperfetto.ipc.wire;

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
import static org.jperfetto.wire.ProtoWire.taggedLengthDelimitedSize;
import static org.jperfetto.wire.ProtoWire.taggedVarIntSize;

import java.util.Arrays;
import org.jperfetto.wire.Varints;

/**
 * Encodes a {@link CommitBatch} as CommitDataRequest bytes into an array it reuses, so a commit
 * costs no message objects: byte for byte what protobuf-java writes for the same request (fields in
 * number order, every uint32 of a move or patch group present, has_more_patches only when true,
 * flush_request_id only when non-zero). Its other half, in the service, is
 * {@link CommitDataDecoder}. Not thread-safe: one per connection, used under its drain lock.
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
public final class CommitDataEncoder {
  /** A patch's data: the 4 bytes of a redundant size field. */
  private static final int PATCH_DATA_SIZE = Varints.REDUNDANT_SIZE;

  private byte[] out = new byte[512];
  /** Size of each patch group's message, from the sizing pass. */
  private int[] groupSizes = new int[8];

  /** The array {@link #encode} wrote into (valid up to the length it returned). */
  public byte[] buffer() {
    return out;
  }

  /** Writes batch's request at buffer()[0..] and returns its length. */
  public int encode(CommitBatch batch) {
    int size = 0;
    for (int i = 0; i < batch.moves; i++) {
      size += taggedLengthDelimitedSize(CHUNKS_TO_MOVE, moveSize(batch, i));
    }
    int groups = 0;
    for (int i = 0; i < batch.patches; ) {
      int end = groupEnd(batch, i);
      if (groups == groupSizes.length) {
        groupSizes = Arrays.copyOf(groupSizes, groups * 2);
      }
      int g = groupSize(batch, i, end);
      groupSizes[groups++] = g;
      size += taggedLengthDelimitedSize(CHUNKS_TO_PATCH, g);
      i = end;
    }
    if (batch.flushRequestId != 0) {
      size += taggedVarIntSize(FLUSH_REQUEST_ID, batch.flushRequestId);
    }
    if (out.length < size) {
      out = new byte[Math.max(size, out.length * 2)];
    }
    byte[] b = out;
    int at = 0;
    for (int i = 0; i < batch.moves; i++) {
      at = Varints.put(b, Varints.put(b, at, CHUNKS_TO_MOVE), moveSize(batch, i));
      at = uint32(b, at, MOVE_PAGE, batch.movePage[i]);
      at = uint32(b, at, MOVE_CHUNK, batch.moveChunk[i]);
      at = uint32(b, at, MOVE_TARGET_BUFFER, batch.moveTargetBuffer[i]);
    }
    int group = 0;
    for (int i = 0; i < batch.patches; ) {
      int end = groupEnd(batch, i);
      at = Varints.put(b, Varints.put(b, at, CHUNKS_TO_PATCH), groupSizes[group++]);
      at = uint32(b, at, PATCH_TARGET_BUFFER, batch.patchTargetBuffer[i]);
      at = uint32(b, at, PATCH_WRITER_ID, batch.patchWriterId[i]);
      at = uint32(b, at, PATCH_CHUNK_ID, batch.patchChunkId[i]);
      for (int p = i; p < end; p++) {
        at = Varints.put(b, Varints.put(b, at, PATCH_PATCHES), patchSize(batch, p));
        at = uint32(b, at, PATCH_OFFSET, batch.patchOffset[p]);
        at = Varints.put(b, Varints.put(b, at, PATCH_DATA), PATCH_DATA_SIZE);
        int data = batch.patchData[p];
        b[at++] = (byte) data;
        b[at++] = (byte) (data >>> 8);
        b[at++] = (byte) (data >>> 16);
        b[at++] = (byte) (data >>> 24);
      }
      if (batch.patchHasMore[end - 1]) {
        at = Varints.put(b, Varints.put(b, at, PATCH_HAS_MORE), 1);
      }
      i = end;
    }
    if (batch.flushRequestId != 0) {
      at = Varints.put(b, Varints.put(b, at, FLUSH_REQUEST_ID), batch.flushRequestId);
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
    return uint32Size(MOVE_PAGE, batch.movePage[i]) + uint32Size(MOVE_CHUNK, batch.moveChunk[i])
        + uint32Size(MOVE_TARGET_BUFFER, batch.moveTargetBuffer[i]);
  }

  private static int groupSize(CommitBatch batch, int start, int end) {
    int size = uint32Size(PATCH_TARGET_BUFFER, batch.patchTargetBuffer[start])
        + uint32Size(PATCH_WRITER_ID, batch.patchWriterId[start])
        + uint32Size(PATCH_CHUNK_ID, batch.patchChunkId[start]);
    for (int p = start; p < end; p++) {
      size += taggedLengthDelimitedSize(PATCH_PATCHES, patchSize(batch, p));
    }
    return batch.patchHasMore[end - 1] ? size + taggedVarIntSize(PATCH_HAS_MORE, 1) : size;
  }

  private static int patchSize(CommitBatch batch, int p) {
    return uint32Size(PATCH_OFFSET, batch.patchOffset[p]) + taggedLengthDelimitedSize(PATCH_DATA, PATCH_DATA_SIZE);
  }

  private static int uint32Size(int tag, int v) {
    return taggedVarIntSize(tag, Integer.toUnsignedLong(v));
  }

  private static int uint32(byte[] b, int at, int tag, int v) {
    return Varints.put(b, Varints.put(b, at, tag), Integer.toUnsignedLong(v));
  }
}
