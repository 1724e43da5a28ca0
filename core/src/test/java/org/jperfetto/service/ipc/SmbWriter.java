package org.jperfetto.service.ipc;

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
 * A test writer over a producer's SMB mapping (not the producer library): each packet is one or
 * more fragments in 4-per-page chunks of one writer id; with {@code patchHead} a packet that
 * spans chunks leaves its first 4 bytes zero and sends them as a ChunkToPatch, as a real writer
 * does with nested message sizes.
 */
final class SmbWriter {
  private final SharedMemoryAbi abi;
  private final MemorySegment mem;
  final int writerId;
  final int targetBuffer;
  private long chunk = ChunkHandle.INVALID;
  private int nextChunkId;
  private int currentChunkId;
  private long cursor;
  private long limit;
  private long sizeAt;
  private final List<CommitDataRequest.ChunksToMove> ready = new ArrayList<>();
  private final List<CommitDataRequest.ChunkToPatch> patches = new ArrayList<>();

  SmbWriter(SharedMemoryAbi abi, int writerId, int targetBuffer) {
    this.abi = abi;
    this.mem = abi.segment();
    this.writerId = writerId;
    this.targetBuffer = targetBuffer;
  }

  /** False when the SMB has no free chunk left (commit, let the service free some, retry). */
  synchronized boolean write(byte[] packet, boolean patchHead) {
    if (chunk == ChunkHandle.INVALID || limit - cursor < PacketFragments.SIZE_FIELD_BYTES + 4) {
      if (!acquire(false)) {
        return false;
      }
    }
    abi.incrementPacketCount(chunk);
    beginFragment();
    int done = 0;
    while (true) {
      int n = (int) Math.min(packet.length - done, limit - cursor);
      MemorySegment.copy(packet, done, mem, ValueLayout.JAVA_BYTE, cursor, n);
      if (patchHead && done == 0 && n >= 4 && n < packet.length) {
        mem.asSlice(cursor, 4).fill((byte) 0);
        abi.setFlag(chunk, ChunkHeader.CHUNK_NEEDS_PATCHING);
        patches.add(CommitDataRequest.ChunkToPatch.newBuilder().setTargetBuffer(targetBuffer)
            .setWriterId(writerId).setChunkId(currentChunkId)
            .addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder()
                .setOffset((int) (cursor - abi.payloadOffset(chunk)))
                .setData(ByteString.copyFrom(packet, 0, 4)))
            .build());
      }
      cursor += n;
      done += n;
      endFragment();
      if (done == packet.length) {
        return true;
      }
      abi.setFlag(chunk, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
      if (!acquire(true)) {
        return false;
      }
      beginFragment();
    }
  }

  /** Completes the open chunk and moves every completed chunk and patch into req. */
  synchronized void drainInto(CommitDataRequest.Builder req) {
    complete();
    req.addAllChunksToMove(ready).addAllChunksToPatch(patches);
    ready.clear();
    patches.clear();
  }

  private void beginFragment() {
    sizeAt = cursor;
    cursor += PacketFragments.SIZE_FIELD_BYTES;
  }

  private void endFragment() {
    Varints.writeRedundant(mem, sizeAt, (int) (cursor - sizeAt - PacketFragments.SIZE_FIELD_BYTES));
  }

  private void complete() {
    if (chunk != ChunkHandle.INVALID) {
      int page = abi.releaseChunkAsComplete(chunk);
      ready.add(CommitDataRequest.ChunksToMove.newBuilder().setPage(page)
          .setChunk(ChunkHandle.chunkIndex(chunk)).setTargetBuffer(targetBuffer).build());
      chunk = ChunkHandle.INVALID;
    }
  }

  private boolean acquire(boolean continuation) {
    complete();
    short header = ChunkHeader.packets(continuation ? 1 : 0,
        continuation ? ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK : 0);
    for (int page = 0; page < abi.numPages(); page++) {
      if (abi.isPageFree(page)) {
        abi.tryPartitionPage(page, PageLayout.DIV4);
      }
      for (int free = abi.getFreeChunks(page), idx = 0; free != 0; free >>>= 1, idx++) {
        if ((free & 1) == 0) {
          continue;
        }
        long h = abi.tryAcquireChunkForWriting(page, idx, nextChunkId, writerId, header);
        if (h != ChunkHandle.INVALID) {
          currentChunkId = nextChunkId++;
          chunk = h;
          cursor = abi.payloadOffset(h);
          limit = cursor + ChunkHandle.payloadSize(h);
          return true;
        }
      }
    }
    return false;
  }
}
