package org.jperfetto.service.ipc;

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
import org.jperfetto.ipc.wire.ProtoCursor;
import org.jperfetto.service.ProducerEndpoint;
import org.jperfetto.service.buffer.PatchBatch;

/**
 * Reads a CommitDataRequest where it lies (the IPC frame buffer) and applies it to a producer
 * endpoint without building protobuf objects or allocating: the request a producer sends for
 * every few chunks it fills, so the one whose cost decides how fast the service frees its SMB.
 * Bounds come from {@link ProtoCursor}; field values are as untrusted as ever and the endpoint
 * checks them. Not thread-safe: one per service thread.
 */
final class CommitDataDecoder {
  /**
   * Applies the CommitDataRequest encoded at [offset, offset + length) of args to endpoint if it
   * holds only chunks to move out of the SMB, patches and a flush id (see {@link #isPlainCommit}),
   * in the order {@link ProducerEndpoint#commitData} applies them: moves, then patches, then the
   * flush. Returns false, having done nothing, for anything else (inline chunk data, unknown
   * fields, malformed bytes): the caller then decodes it with {@code CommitDataRequest}'s parser,
   * which judges it.
   */
  boolean apply(MemorySegment args, long offset, int length, ProducerEndpoint endpoint) {
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
      long n = c.readLength();
      ProtoCursor m = entryCursor.reset(args, c.position(), n);
      c.skipBytes(n);
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
        switch (field) {
          case MOVE_PAGE -> page = value;
          case MOVE_CHUNK -> chunk = value;
          case MOVE_TARGET_BUFFER -> targetBuffer = value;
          default -> { } // chunk_incomplete: meaningful only with inline data
        }
      }
      if (connected) {
        connected = endpoint.commitChunk(page, chunk, targetBuffer);
      }
    }
    if (hasPatches && connected) {
      applyPatches(endpoint, args, offset, length);
    }
    endpoint.endCommit(flushRequestId);
    return true;
  }

  private void applyPatches(ProducerEndpoint endpoint, MemorySegment args, long offset, int length) {
    ProtoCursor c = commitCursor.reset(args, offset, length);
    while (c.hasMore()) {
      int tag = c.readTag();
      if (tag == FLUSH_REQUEST_ID) {
        c.readVarint();
        continue;
      }
      long n = c.readLength();
      ProtoCursor e = entryCursor.reset(args, c.position(), n);
      c.skipBytes(n);
      if (tag != CHUNKS_TO_PATCH) {
        continue;
      }
      patchBatch.clear();
      int targetBuffer = 0;
      int writerId = 0;
      int chunkId = 0;
      boolean more = false;
      while (e.hasMore()) {
        int field = e.readTag();
        if (field == PATCH_PATCHES) {
          long pn = e.readLength();
          ProtoCursor q = patchCursor.reset(args, e.position(), pn);
          e.skipBytes(pn);
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
          patchBatch.add(patchOffset, args, dataAt, dataLength);
          continue;
        }
        int value = (int) e.readVarint();
        switch (field) {
          case PATCH_TARGET_BUFFER -> targetBuffer = value;
          case PATCH_WRITER_ID -> writerId = value;
          case PATCH_CHUNK_ID -> chunkId = value;
          default -> more = value != 0; // PATCH_HAS_MORE
        }
      }
      endpoint.patchChunk(targetBuffer, writerId, chunkId, patchBatch, more);
    }
    patchBatch.clear();
  }

  /**
   * Whether the request holds only what {@link #apply} handles: chunks_to_move (page,
   * chunk, target_buffer, chunk_incomplete), chunks_to_patch (target_buffer, writer_id, chunk_id,
   * patches of offset and data, has_more_patches) and flush_request_id, each well formed.
   */
  boolean isPlainCommit(MemorySegment args, long offset, int length) {
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
      long n = c.readLength();
      if (n < 0) {
        return false;
      }
      ProtoCursor e = entryCursor.reset(args, c.position(), n);
      c.skipBytes(n);
      while (e.hasMore()) {
        int field = e.readTag();
        if (tag == CHUNKS_TO_MOVE ? field == MOVE_PAGE || field == MOVE_CHUNK
            || field == MOVE_TARGET_BUFFER || field == MOVE_CHUNK_INCOMPLETE
            : field == PATCH_TARGET_BUFFER || field == PATCH_WRITER_ID || field == PATCH_CHUNK_ID
            || field == PATCH_HAS_MORE) {
          e.readVarint();
        } else if (tag == CHUNKS_TO_PATCH && field == PATCH_PATCHES) {
          long pn = e.readLength();
          if (pn < 0) {
            return false;
          }
          ProtoCursor q = patchCursor.reset(args, e.position(), pn);
          e.skipBytes(pn);
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
  private final PatchBatch patchBatch = new PatchBatch();
}
