package org.jperfetto.service;

import com.google.protobuf.ByteString;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.wire.Varints;

/**
 * A minimal test trace writer on the abi package: packets become fragments over chunks of one
 * writer. A packet that spans chunks can leave its first 4 bytes to a patch (as upstream's
 * writer leaves nested sizes to patches): the chunk is flagged needs-patching, the bytes written
 * as zeros and the real ones queued as a ChunkToPatch.
 */
final class TestTraceWriter {
  private final SharedMemoryAbi abi;
  private final MemorySegment smb;
  final int writerId;
  final int bufferId;
  private final PageLayout layout;
  private int nextChunkId;
  private long chunk = ChunkHandle.INVALID;
  private int chunkId;
  private long pos;
  private long end;
  private long sizeField;
  private long fragmentStart;
  boolean patchSpanningPackets;

  private final List<long[]> completed = new ArrayList<>(); // {page, chunkIdx}
  private final List<CommitDataRequest.ChunkToPatch> patches = new ArrayList<>();

  TestTraceWriter(SharedMemoryAbi abi, int writerId, int bufferId, PageLayout layout) {
    this.abi = abi;
    this.smb = abi.segment();
    this.writerId = writerId;
    this.bufferId = bufferId;
    this.layout = layout;
  }

  /** Writes one packet; false if the SMB had no free chunk. */
  boolean write(byte[] data) {
    if (chunk == ChunkHandle.INVALID || end - pos < PacketFragments.SIZE_FIELD_BYTES + 8) {
      if (!nextChunk(false)) {
        return false;
      }
    }
    abi.incrementPacketCount(chunk);
    startFragment();
    int written = 0;
    long patchAt = -1;
    int patchChunkId = 0;
    while (true) {
      int n = (int) Math.min(data.length - written, end - pos);
      MemorySegment.copy(data, written, smb, ValueLayout.JAVA_BYTE, pos, n);
      if (written == 0 && n < data.length && patchSpanningPackets && n >= 4) {
        patchAt = pos - abi.payloadOffset(chunk);
        patchChunkId = chunkId;
        smb.asSlice(pos, 4).fill((byte) 0);
        abi.setFlag(chunk, ChunkHeader.CHUNK_NEEDS_PATCHING);
      }
      pos += n;
      written += n;
      if (written == data.length) {
        break;
      }
      Varints.writeRedundant(smb, sizeField, (int) (pos - fragmentStart));
      abi.setFlag(chunk, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
      if (!nextChunk(true)) {
        return false;
      }
      startFragment();
    }
    Varints.writeRedundant(smb, sizeField, (int) (pos - fragmentStart));
    if (patchAt >= 0) {
      patches.add(CommitDataRequest.ChunkToPatch.newBuilder().setTargetBuffer(bufferId)
          .setWriterId(writerId).setChunkId(patchChunkId)
          .addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder().setOffset((int) patchAt)
              .setData(ByteString.copyFrom(data, 0, 4)))
          .build());
    }
    return true;
  }

  void finishChunk() {
    if (chunk != ChunkHandle.INVALID) {
      int page = abi.releaseChunkAsComplete(chunk);
      completed.add(new long[] {page, ChunkHandle.chunkIndex(chunk)});
      chunk = ChunkHandle.INVALID;
    }
  }

  /** Moves the completed chunks (and, if withPatches, the queued patches) into req. */
  void drainInto(CommitDataRequest.Builder req, boolean withPatches) {
    for (long[] c : completed) {
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage((int) c[0])
          .setChunk((int) c[1]).setTargetBuffer(bufferId));
    }
    completed.clear();
    if (withPatches) {
      req.addAllChunksToPatch(patches);
      patches.clear();
    }
  }

  List<CommitDataRequest.ChunkToPatch> takePatches() {
    List<CommitDataRequest.ChunkToPatch> out = List.copyOf(patches);
    patches.clear();
    return out;
  }

  private void startFragment() {
    sizeField = pos;
    pos += PacketFragments.SIZE_FIELD_BYTES;
    fragmentStart = pos;
  }

  private boolean nextChunk(boolean continuing) {
    finishChunk();
    short packets = continuing
        ? ChunkHeader.packets(1, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
        : ChunkHeader.packets(0, 0);
    for (int page = 0; page < abi.numPages(); page++) {
      if (abi.isPageFree(page)) {
        abi.tryPartitionPage(page, layout);
      }
      int free = abi.getFreeChunks(page);
      for (int c = 0; free != 0; c++, free >>>= 1) {
        if ((free & 1) != 0) {
          long h = abi.tryAcquireChunkForWriting(page, c, nextChunkId, writerId, packets);
          if (h != ChunkHandle.INVALID) {
            chunkId = nextChunkId++;
            chunk = h;
            pos = abi.payloadOffset(h);
            end = pos + ChunkHandle.payloadSize(h);
            return true;
          }
        }
      }
    }
    return false;
  }
}
