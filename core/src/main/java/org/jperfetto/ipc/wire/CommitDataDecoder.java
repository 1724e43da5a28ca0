package org.jperfetto.ipc.wire;

import static org.jperfetto.ipc.wire.CommitDataTags.CHUNKS_TO_MOVE;
import static org.jperfetto.ipc.wire.CommitDataTags.CHUNKS_TO_PATCH;
import static org.jperfetto.ipc.wire.CommitDataTags.FLUSH_REQUEST_ID;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_CHUNK;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_CHUNK_INCOMPLETE;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_PAGE;
import static org.jperfetto.ipc.wire.CommitDataTags.MOVE_TARGET_BUFFER;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_CHUNK_ID;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_DATA;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_HAS_MORE;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_OFFSET;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_PATCHES;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_TARGET_BUFFER;
import static org.jperfetto.ipc.wire.CommitDataTags.PATCH_WRITER_ID;

import java.lang.foreign.MemorySegment;
import org.jperfetto.wire.ProtoCursor;

/**
 * Reads a CommitDataRequest where it lies (the IPC frame buffer) and hands what it says to a
 * {@link Sink} without building protobuf objects or allocating: the request a producer sends for
 * every few chunks it fills, so the one whose cost decides how fast the service frees its SMB. Its
 * other half, in the producer, is {@link CommitDataEncoder}. Bounds come from {@link ProtoCursor};
 * field values are as untrusted as ever and the sink checks them. Not thread-safe: one per service
 * thread.
 */
public final class CommitDataDecoder {
  /** What a CommitDataRequest asks for, in the order the service applies it. */
  public interface Sink {
    /**
     * A chunk to move out of the SMB (a chunks_to_move entry). Returns false when the producer is
     * gone: no more moves or patches are handed over, only {@link #endCommit}.
     */
    boolean moveChunk(int page, int chunk, int targetBuffer);

    /**
     * One patch of the chunks_to_patch entry being read: the dataLength bytes at dataOffset of data
     * go at offset of the chunk that {@link #endChunkPatches} names next.
     */
    void patch(long offset, MemorySegment data, long dataOffset, int dataLength);

    /** Ends a chunks_to_patch entry: its patches were handed to {@link #patch} just before. */
    void endChunkPatches(int targetBuffer, int writerId, int chunkId, boolean hasMorePatches);

    /** Ends the request; flushRequestId is 0 when it acknowledges no flush. */
    void endCommit(long flushRequestId);
  }

  /**
   * Hands the CommitDataRequest encoded at [offset, offset + length) of args to sink if it holds
   * only chunks to move out of the SMB, patches and a flush id (see {@link #isPlainCommit}): moves,
   * then patches, then the end. Returns false, having called nothing, for anything else (inline
   * chunk data, unknown fields, malformed bytes): the caller then decodes it with
   * {@code CommitDataRequest}'s parser, which judges it.
   */
  public boolean apply(MemorySegment args, long offset, int length, Sink sink) {
    if (!isPlainCommit(args, offset, length)) {
      return false;
    }
    ProtoCursor c = commitCursor.reset(args, offset, length);
    long flushRequestId = 0;
    boolean connected = true;
    boolean hasPatches = false;
    while (c.hasMore()) {
      int tag = c.readTag();
      if (tag == FLUSH_REQUEST_ID) {
        flushRequestId = c.readVarint();
        continue;
      }
      ProtoCursor m = c.readMessage(entryCursor);
      if (tag == CHUNKS_TO_PATCH) {
        hasPatches = true;
        continue;
      }
      int page = 0;
      int chunk = 0;
      int targetBuffer = 0;
      while (m.hasMore()) {
        int field = m.readTag();
        int value = (int) m.readVarint(); // uint32 fields: the low 32 bits, as protobuf-java
        if (field == MOVE_PAGE) {
          page = value;
        } else if (field == MOVE_CHUNK) {
          chunk = value;
        } else if (field == MOVE_TARGET_BUFFER) {
          targetBuffer = value;
        } // else chunk_incomplete: meaningful only with inline data
      }
      if (connected) {
        connected = sink.moveChunk(page, chunk, targetBuffer);
      }
    }
    if (hasPatches && connected) {
      applyPatches(sink, args, offset, length);
    }
    sink.endCommit(flushRequestId);
    return true;
  }

  private void applyPatches(Sink sink, MemorySegment args, long offset, int length) {
    ProtoCursor c = commitCursor.reset(args, offset, length);
    while (c.hasMore()) {
      int tag = c.readTag();
      if (tag == FLUSH_REQUEST_ID) {
        c.readVarint();
        continue;
      }
      ProtoCursor e = c.readMessage(entryCursor);
      if (tag != CHUNKS_TO_PATCH) {
        continue;
      }
      int targetBuffer = 0;
      int writerId = 0;
      int chunkId = 0;
      boolean more = false;
      while (e.hasMore()) {
        int field = e.readTag();
        if (field == PATCH_PATCHES) {
          ProtoCursor q = e.readMessage(patchCursor);
          long patchOffset = 0;
          long dataAt = 0;
          int dataLength = 0;
          while (q.hasMore()) {
            if (q.readTag() == PATCH_OFFSET) {
              patchOffset = q.readVarint() & 0xFFFF_FFFFL;
            } else { // PATCH_DATA
              dataLength = (int) q.readLength();
              dataAt = q.position();
              q.skipBytes(dataLength);
            }
          }
          sink.patch(patchOffset, args, dataAt, dataLength);
          continue;
        }
        int value = (int) e.readVarint();
        if (field == PATCH_TARGET_BUFFER) {
          targetBuffer = value;
        } else if (field == PATCH_WRITER_ID) {
          writerId = value;
        } else if (field == PATCH_CHUNK_ID) {
          chunkId = value;
        } else { // PATCH_HAS_MORE
          more = value != 0;
        }
      }
      sink.endChunkPatches(targetBuffer, writerId, chunkId, more);
    }
  }

  /**
   * Whether the request holds only what {@link #apply} handles: chunks_to_move (page,
   * chunk, target_buffer, chunk_incomplete), chunks_to_patch (target_buffer, writer_id, chunk_id,
   * patches of offset and data, has_more_patches) and flush_request_id, each well formed.
   */
  public boolean isPlainCommit(MemorySegment args, long offset, int length) {
    ProtoCursor c = commitCursor.reset(args, offset, length);
    while (c.hasMore()) {
      int tag = c.readTag();
      if (tag == FLUSH_REQUEST_ID) {
        c.readVarint();
        continue;
      }
      if (tag != CHUNKS_TO_MOVE && tag != CHUNKS_TO_PATCH) {
        return false;
      }
      ProtoCursor e = c.readMessage(entryCursor);
      if (c.failed()) {
        return false;
      }
      while (e.hasMore()) {
        int field = e.readTag();
        if (tag == CHUNKS_TO_MOVE ? field == MOVE_PAGE || field == MOVE_CHUNK
            || field == MOVE_TARGET_BUFFER || field == MOVE_CHUNK_INCOMPLETE
            : field == PATCH_TARGET_BUFFER || field == PATCH_WRITER_ID || field == PATCH_CHUNK_ID
            || field == PATCH_HAS_MORE) {
          e.readVarint();
        } else if (tag == CHUNKS_TO_PATCH && field == PATCH_PATCHES) {
          ProtoCursor q = e.readMessage(patchCursor);
          if (e.failed()) {
            return false;
          }
          while (q.hasMore()) {
            int pf = q.readTag();
            if (pf == PATCH_OFFSET) {
              q.readVarint();
            } else if (pf == PATCH_DATA) {
              q.skipBytes(q.readLength());
            } else {
              return false;
            }
          }
          if (q.failed()) {
            return false;
          }
        } else {
          return false;
        }
      }
      if (e.failed()) {
        return false;
      }
    }
    return !c.failed();
  }

  private final ProtoCursor commitCursor = new ProtoCursor();
  private final ProtoCursor entryCursor = new ProtoCursor();
  private final ProtoCursor patchCursor = new ProtoCursor();
}
