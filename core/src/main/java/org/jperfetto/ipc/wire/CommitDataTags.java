package org.jperfetto.ipc.wire;

import static org.jperfetto.wire.ProtoWire.WIRE_TYPE_LENGTH_DELIMITED;
import static org.jperfetto.wire.ProtoWire.WIRE_TYPE_VARINT;
import static org.jperfetto.wire.ProtoWire.makeTag;

import org.jperfetto.protos.CommitDataRequest.ChunkToPatch.Patch;
import org.jperfetto.protos.CommitDataRequest.ChunkToPatch;
import org.jperfetto.protos.CommitDataRequest.ChunksToMove;
import org.jperfetto.protos.CommitDataRequest;

/**
 * CommitDataRequest's tags, made from the generated field numbers: {@link CommitDataEncoder} (the
 * producer's side) and {@link CommitDataDecoder} (the service's) both take them from here, so the
 * two sides of the busiest message cannot disagree.
 */
public final class CommitDataTags {
  private CommitDataTags() {}

  public static final int CHUNKS_TO_MOVE =
      makeTag(CommitDataRequest.CHUNKS_TO_MOVE_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);
  public static final int CHUNKS_TO_PATCH =
      makeTag(CommitDataRequest.CHUNKS_TO_PATCH_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);
  public static final int FLUSH_REQUEST_ID = makeTag(CommitDataRequest.FLUSH_REQUEST_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);

  public static final int MOVE_PAGE = makeTag(ChunksToMove.PAGE_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int MOVE_CHUNK = makeTag(ChunksToMove.CHUNK_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int MOVE_TARGET_BUFFER = makeTag(ChunksToMove.TARGET_BUFFER_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int MOVE_CHUNK_INCOMPLETE = makeTag(ChunksToMove.CHUNK_INCOMPLETE_FIELD_NUMBER, WIRE_TYPE_VARINT);

  public static final int PATCH_TARGET_BUFFER = makeTag(ChunkToPatch.TARGET_BUFFER_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int PATCH_WRITER_ID = makeTag(ChunkToPatch.WRITER_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int PATCH_CHUNK_ID = makeTag(ChunkToPatch.CHUNK_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int PATCH_PATCHES = makeTag(ChunkToPatch.PATCHES_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);
  public static final int PATCH_HAS_MORE = makeTag(ChunkToPatch.HAS_MORE_PATCHES_FIELD_NUMBER, WIRE_TYPE_VARINT);

  public static final int PATCH_OFFSET = makeTag(Patch.OFFSET_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int PATCH_DATA = makeTag(Patch.DATA_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);
}
