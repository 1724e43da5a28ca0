package org.jperfetto.ipc.wire;

import static org.jperfetto.ipc.wire.ProtoCursor.LEN;
import static org.jperfetto.ipc.wire.ProtoCursor.VARINT;

import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.CommitDataRequest.ChunkToPatch;
import org.jperfetto.protos.CommitDataRequest.ChunkToPatch.Patch;
import org.jperfetto.protos.CommitDataRequest.ChunksToMove;

/**
 * CommitDataRequest's tags (field number {@code << 3 |} wire type), made from the generated field
 * numbers: the producer's hand-written encoder and the service's hand-written decoder both take
 * them from here, so the two sides of the busiest message cannot disagree. All are compile-time
 * constants (usable as switch labels) and fit one byte.
 */
public final class CommitDataTags {
  private CommitDataTags() {}

  public static final int CHUNKS_TO_MOVE = CommitDataRequest.CHUNKS_TO_MOVE_FIELD_NUMBER << 3 | LEN;
  public static final int CHUNKS_TO_PATCH = CommitDataRequest.CHUNKS_TO_PATCH_FIELD_NUMBER << 3 | LEN;
  public static final int FLUSH_REQUEST_ID = CommitDataRequest.FLUSH_REQUEST_ID_FIELD_NUMBER << 3 | VARINT;

  public static final int MOVE_PAGE = ChunksToMove.PAGE_FIELD_NUMBER << 3 | VARINT;
  public static final int MOVE_CHUNK = ChunksToMove.CHUNK_FIELD_NUMBER << 3 | VARINT;
  public static final int MOVE_TARGET_BUFFER = ChunksToMove.TARGET_BUFFER_FIELD_NUMBER << 3 | VARINT;
  public static final int MOVE_CHUNK_INCOMPLETE = ChunksToMove.CHUNK_INCOMPLETE_FIELD_NUMBER << 3 | VARINT;

  public static final int PATCH_TARGET_BUFFER = ChunkToPatch.TARGET_BUFFER_FIELD_NUMBER << 3 | VARINT;
  public static final int PATCH_WRITER_ID = ChunkToPatch.WRITER_ID_FIELD_NUMBER << 3 | VARINT;
  public static final int PATCH_CHUNK_ID = ChunkToPatch.CHUNK_ID_FIELD_NUMBER << 3 | VARINT;
  public static final int PATCH_PATCHES = ChunkToPatch.PATCHES_FIELD_NUMBER << 3 | LEN;
  public static final int PATCH_HAS_MORE = ChunkToPatch.HAS_MORE_PATCHES_FIELD_NUMBER << 3 | VARINT;

  public static final int PATCH_OFFSET = Patch.OFFSET_FIELD_NUMBER << 3 | VARINT;
  public static final int PATCH_DATA = Patch.DATA_FIELD_NUMBER << 3 | LEN;
}
