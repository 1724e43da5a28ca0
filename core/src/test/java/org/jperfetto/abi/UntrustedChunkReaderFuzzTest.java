package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.wire.Varints;

/**
 * Coverage-guided fuzzing of the service's reader of producer chunks (docs/fuzzing.md). The input
 * drives a hostile producer over a small SMB: it scribbles bytes and page header words anywhere,
 * lays out honest chunks through the ABI, and asks the reader to commit or scrape any page and
 * chunk index. Checked on every read: nothing throws, an OK chunk is the one asked for and lies
 * inside its page, the counts and sizes agree with an independent walk of its fragments, a
 * committed chunk is held BEING_READ and freed by the release, and a scrape changes nothing.
 */
class UntrustedChunkReaderFuzzTest {
  @FuzzTest
  void chunks(FuzzedDataProvider data) {
    int pageSize = SharedMemoryAbi.MIN_PAGE_SIZE << data.consumeInt(0, 2);
    int numPages = data.consumeInt(1, 3);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate((long) pageSize * numPages, 4096);
      SharedMemoryAbi abi = new SharedMemoryAbi(smb, pageSize);
      UntrustedChunkReader reader = new UntrustedChunkReader(abi);
      for (int op = 0; op < 64 && data.remainingBytes() > 0; op++) {
        switch (data.consumeInt(0, 4)) {
          case 0 -> scribble(data, smb);
          case 1 -> PageHeader.HEADER_BITMAP.setVolatile(smb, abi.pageOffset(data.consumeInt(0, numPages - 1)),
              data.consumeInt());
          case 2 -> honestChunk(data, abi);
          case 3 -> commit(data, abi, reader);
          default -> scrape(data, abi, reader);
        }
      }
    }
  }

  private static void scribble(FuzzedDataProvider data, MemorySegment smb) {
    int at = data.consumeInt(0, (int) smb.byteSize() - 1);
    byte[] bytes = data.consumeBytes(Math.min(64, (int) smb.byteSize() - at));
    MemorySegment.copy(bytes, 0, smb, ValueLayout.JAVA_BYTE, at, bytes.length);
  }

  /** A chunk as an honest writer leaves it: partitioned page, header, fragments, maybe COMPLETE. */
  private static void honestChunk(FuzzedDataProvider data, SharedMemoryAbi abi) {
    int page = data.consumeInt(0, abi.numPages() - 1);
    PageLayout layout = PageLayout.values()[data.consumeInt(1, PageLayout.values().length - 1)];
    abi.tryPartitionPage(page, layout);
    int chunkIdx = data.consumeInt(0, PageHeader.MAX_CHUNKS_PER_PAGE - 1);
    long c = abi.tryAcquireChunkForWriting(page, chunkIdx, data.consumeInt(),
        data.consumeInt(1, ChunkHeader.MAX_WRITER_ID), ChunkHeader.packets(0, data.consumeInt(0, 7)));
    if (c == ChunkHandle.INVALID) {
      return;
    }
    long pos = abi.payloadOffset(c);
    long end = pos + ChunkHandle.payloadSize(c);
    int fragments = data.consumeInt(0, 6);
    for (int i = 0; i < fragments && pos + 4 <= end; i++) {
      int size = data.consumeInt(0, (int) Math.min(Varints.MAX_REDUNDANT, end - pos - 4 + 8));
      abi.incrementPacketCount(c);
      Varints.writeRedundant(abi.segment(), pos, size);
      pos += 4 + size;
    }
    if (data.consumeBoolean()) {
      abi.releaseChunkAsComplete(c);
    }
  }

  private static void commit(FuzzedDataProvider data, SharedMemoryAbi abi, UntrustedChunkReader reader) {
    int page = data.consumeInt(-1, abi.numPages());
    int chunkIdx = data.consumeInt(-1, PageHeader.MAX_CHUNKS_PER_PAGE);
    ChunkReadResult r = reader.acquireCommitted(page, chunkIdx);
    if (r != ChunkReadResult.OK) {
      return;
    }
    checkView(abi, reader, page, chunkIdx, true);
    assertEquals(ChunkState.BEING_READ, abi.chunkState(page, chunkIdx), "a committed chunk is held");
    if (data.consumeBoolean()) {
      scribble(data, abi.segment()); // the producer may still write while the service copies
    }
    int before = abi.headerBitmap(page);
    ChunkReadResult released = reader.releaseAsFree();
    if (released == ChunkReadResult.OK) {
      assertEquals(ChunkState.FREE, abi.chunkState(page, chunkIdx), "released chunk not free");
    } else {
      assertEquals(ChunkReadResult.RELEASE_FAILED, released);
      assertTrue(PageHeader.chunkStateBits(before, chunkIdx) != ChunkState.BEING_READ.bits()
          || PageHeader.numChunks(before) <= chunkIdx
          || abi.chunkSizeForLayoutBits(PageHeader.layoutBits(before)) != ChunkHandle.chunkSize(reader.chunk()),
          "release failed although the chunk was still held");
    }
  }

  private static void scrape(FuzzedDataProvider data, SharedMemoryAbi abi, UntrustedChunkReader reader) {
    int page = data.consumeInt(-1, abi.numPages());
    int chunkIdx = data.consumeInt(-1, PageHeader.MAX_CHUNKS_PER_PAGE);
    int bitmap = data.consumeBoolean() && page >= 0 && page < abi.numPages()
        ? abi.headerBitmap(page) : data.consumeInt();
    byte[] before = abi.segment().toArray(ValueLayout.JAVA_BYTE);
    ChunkReadResult r = reader.scrape(page, bitmap, chunkIdx);
    assertTrue(java.util.Arrays.equals(before, abi.segment().toArray(ValueLayout.JAVA_BYTE)),
        "a scrape changed the SMB");
    if (r == ChunkReadResult.OK) {
      checkView(abi, reader, page, chunkIdx, PageHeader.chunkStateBits(bitmap, chunkIdx) == ChunkState.COMPLETE.bits());
    }
  }

  /** The reader's view of an OK chunk against the SMB, walked here independently. */
  private static void checkView(SharedMemoryAbi abi, UntrustedChunkReader reader, int page, int chunkIdx,
      boolean complete) {
    long c = reader.chunk();
    assertEquals(page, ChunkHandle.page(c), "page");
    assertEquals(chunkIdx, ChunkHandle.chunkIndex(c), "chunk index");
    long pageStart = abi.pageOffset(page);
    long payload = reader.payloadOffset();
    assertTrue(payload >= pageStart + PageHeader.SIZE + ChunkHeader.SIZE, "payload before the chunks");
    assertTrue(payload + reader.payloadSize() <= pageStart + abi.pageSize(), "chunk runs past its page");
    assertEquals(complete, reader.complete(), "complete");
    assertTrue(reader.writerId() >= 1 && reader.writerId() <= ChunkHeader.MAX_WRITER_ID, "writer id");
    assertTrue(reader.packetCount() <= ChunkHeader.MAX_PACKET_COUNT, "packet count");
    assertEquals(complete ? reader.packetCount() : Math.max(0, reader.packetCount() - 1),
        reader.usableFragments(), "usable fragments");

    MemorySegment smb = abi.segment();
    long pos = payload;
    long end = payload + reader.payloadSize();
    int found = 0;
    boolean drop = false;
    boolean malformed = false;
    while (found < reader.usableFragments()) {
      long size = 0;
      int len = 0;
      boolean more = true;
      while (more && len < 4 && pos + len < end) {
        int b = smb.get(ValueLayout.JAVA_BYTE, pos + len) & 0xff;
        size |= (long) (b & 0x7f) << (7 * len);
        more = b >= 0x80;
        len++;
      }
      if (more) {
        malformed = true;
        break;
      }
      if (size == PacketFragments.DROP_PACKET_MARKER) {
        drop = true;
        break;
      }
      if (size > end - pos - len) {
        malformed = true;
        break;
      }
      pos += len + size;
      found++;
    }
    assertEquals(found, reader.fragmentsFound(), "fragments found");
    assertEquals(pos - payload, reader.usedSize(), "used size");
    assertEquals(drop, reader.writerDataDrop(), "drop marker");
    assertEquals(malformed, reader.fragmentsMalformed(), "malformed");
    assertTrue(reader.usedSize() >= 0 && reader.usedSize() <= reader.payloadSize(), "used size in chunk");
  }
}
