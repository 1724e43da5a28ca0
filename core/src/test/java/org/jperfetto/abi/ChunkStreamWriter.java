package org.jperfetto.abi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.BooleanSupplier;
import org.jperfetto.wire.Varints;

/**
 * Test-only writer of a packet stream into an SMB, the way upstream's TraceWriter lays it out: each
 * packet becomes fragments over consecutive chunks of one writer, with 4-byte redundant sizes that are
 * compacted to one byte when short and unsplit. When no chunk is free it asks {@code drain} to make
 * room (the test's stand-in for the service).
 */
final class ChunkStreamWriter {
  private final SharedMemoryAbi abi;
  private final MemorySegment smb;
  private final int writerId;
  private final PageLayout layout;
  private final BooleanSupplier drain;
  private int nextChunkId;
  private int pageCursor;

  private long chunk = ChunkHandle.INVALID;
  private long pos;
  private long end;
  private long sizeField;
  private long fragmentStart;

  ChunkStreamWriter(SharedMemoryAbi abi, int writerId, int firstChunkId, PageLayout layout, BooleanSupplier drain) {
    this.abi = abi;
    this.smb = abi.segment();
    this.writerId = writerId;
    this.nextChunkId = firstChunkId;
    this.layout = layout;
    this.drain = drain;
  }

  /** Writes one packet; returns false if no chunk could be had (the SMB stayed full). */
  boolean writePacket(byte[] data) {
    if (chunk == ChunkHandle.INVALID || end - pos < PacketFragments.SIZE_FIELD_BYTES + 8
        || ChunkHeader.packetCount(abi.packetsAcquire(chunk)) >= ChunkHeader.MAX_PACKET_COUNT - 1) {
      if (!switchChunk(false)) {
        return false;
      }
    }
    abi.incrementPacketCount(chunk);
    startFragment();
    int written = 0;
    while (true) {
      int n = (int) Math.min(data.length - written, end - pos);
      MemorySegment.copy(data, written, smb, ValueLayout.JAVA_BYTE, pos, n);
      pos += n;
      written += n;
      if (written == data.length) {
        break;
      }
      Varints.writeRedundant(smb, sizeField, (int) (pos - fragmentStart));
      abi.setFlag(chunk, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
      if (!switchChunk(true)) {
        return false;
      }
      startFragment();
    }
    int size = (int) (pos - fragmentStart);
    if (PacketFragments.isCompactable(size)) {
      pos = PacketFragments.compact(smb, sizeField, size);
    } else {
      Varints.writeRedundant(smb, sizeField, size);
    }
    return true;
  }

  /** Completes the current chunk, if any. */
  void flush() {
    if (chunk != ChunkHandle.INVALID) {
      if (abi.releaseChunkAsComplete(chunk) == SharedMemoryAbi.INVALID_PAGE) {
        throw new IllegalStateException("could not complete " + ChunkHandle.describe(chunk));
      }
      chunk = ChunkHandle.INVALID;
    }
  }

  int nextChunkId() {
    return nextChunkId;
  }

  private void startFragment() {
    sizeField = pos;
    pos += PacketFragments.SIZE_FIELD_BYTES;
    fragmentStart = pos;
  }

  private boolean switchChunk(boolean continuing) {
    flush();
    short packets = continuing
        ? ChunkHeader.packets(1, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
        : ChunkHeader.packets(0, 0);
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < abi.numPages(); i++) {
        int page = (pageCursor + i) % abi.numPages();
        if (abi.isPageFree(page)) {
          abi.tryPartitionPage(page, layout);
        }
        int free = abi.getFreeChunks(page);
        for (int c = 0; free != 0; c++, free >>>= 1) {
          if ((free & 1) == 0) {
            continue;
          }
          long h = abi.tryAcquireChunkForWriting(page, c, nextChunkId, writerId, packets);
          if (h != ChunkHandle.INVALID) {
            nextChunkId++;
            pageCursor = page;
            chunk = h;
            pos = abi.payloadOffset(h);
            end = pos + ChunkHandle.payloadSize(h);
            return true;
          }
        }
      }
      if (!drain.getAsBoolean()) {
        break;
      }
    }
    return false;
  }
}
