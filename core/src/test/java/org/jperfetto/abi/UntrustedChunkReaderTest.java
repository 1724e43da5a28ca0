package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The service-side reader against well-formed and hostile chunks. */
class UntrustedChunkReaderTest {
  private final Arena arena = Arena.ofConfined();
  private final SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(2 * 4096, 4096), 4096);
  private final MemorySegment smb = abi.segment();
  private final UntrustedChunkReader reader = new UntrustedChunkReader(abi);

  @AfterEach
  void close() {
    arena.close();
  }

  /** A chunk of page 0 (Div4) holding fragments of the given sizes, 4-byte size fields, left in {@code state}. */
  private long chunkWith(int chunkIdx, int writerId, int flags, int[] sizes, boolean complete) {
    abi.tryPartitionPage(0, PageLayout.DIV4);
    long c = abi.tryAcquireChunkForWriting(0, chunkIdx, 42, writerId, ChunkHeader.packets(0, flags));
    long pos = abi.payloadOffset(c);
    for (int size : sizes) {
      abi.incrementPacketCount(c);
      Varints.writeRedundant(smb, pos, size);
      pos += 4 + size;
    }
    if (complete) {
      abi.releaseChunkAsComplete(c);
    }
    return c;
  }

  @Test
  void commitOfAWellFormedChunk() {
    chunkWith(2, 5, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK, new int[] {10, 0, 300}, true);
    assertEquals(ChunkReadResult.OK, reader.acquireCommitted(0, 2));
    assertEquals(42, reader.chunkId());
    assertEquals(5, reader.writerId());
    assertEquals(3, reader.packetCount());
    assertEquals(3, reader.usableFragments());
    assertEquals(3, reader.fragmentsFound());
    assertEquals(ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK, reader.flags());
    assertEquals(reader.flags(), reader.effectiveFlags());
    assertEquals(14 + 4 + 304, reader.usedSize());
    assertEquals(1020 - 8, reader.payloadSize());
    assertEquals(8 + 2 * 1020 + 8, reader.payloadOffset());
    assertEquals(ChunkState.BEING_READ, abi.chunkState(0, 2));
    assertThrows(IllegalStateException.class, () -> reader.acquireCommitted(0, 2));
    assertEquals(ChunkReadResult.OK, reader.releaseAsFree());
    assertTrue(abi.isPageFree(0));
    assertEquals(1, reader.count(ChunkReadResult.OK));
  }

  @Test
  void skipsBadPlacesAndStates() {
    assertEquals(ChunkReadResult.PAGE_OUT_OF_RANGE, reader.acquireCommitted(2, 0));
    assertEquals(ChunkReadResult.PAGE_OUT_OF_RANGE, reader.acquireCommitted(-1, 0));
    assertEquals(ChunkReadResult.CHUNK_OUT_OF_RANGE, reader.acquireCommitted(0, 14));
    assertEquals(ChunkReadResult.CHUNK_OUT_OF_RANGE, reader.acquireCommitted(0, -3));
    assertEquals(ChunkReadResult.CHUNK_NOT_IN_LAYOUT, reader.acquireCommitted(0, 0), "not partitioned");
    chunkWith(0, 1, 0, new int[] {1}, false);
    assertEquals(ChunkReadResult.CHUNK_NOT_IN_LAYOUT, reader.acquireCommitted(0, 4), "Div4 has 4 chunks");
    assertEquals(ChunkReadResult.WRONG_STATE, reader.acquireCommitted(0, 0), "still being written");
    assertEquals(ChunkReadResult.WRONG_STATE, reader.acquireCommitted(0, 1), "free");
    PageHeader.HEADER_BITMAP.setVolatile(smb, 4096L, 7 << 28 | 3);
    assertEquals(ChunkReadResult.RESERVED_LAYOUT, reader.acquireCommitted(1, 0));
    assertTrue(ChunkReadResult.RESERVED_LAYOUT.isAbiViolation());
    assertFalse(ChunkReadResult.WRONG_STATE.isAbiViolation());
    assertEquals(2, reader.count(ChunkReadResult.WRONG_STATE));
  }

  @Test
  void badWriterIdIsSkippedAndTheChunkFreed() {
    chunkWith(1, 0, 0, new int[] {4}, true);
    assertEquals(ChunkReadResult.BAD_WRITER_ID, reader.acquireCommitted(0, 1));
    assertEquals(ChunkState.FREE, abi.chunkState(0, 1));
    assertThrows(IllegalStateException.class, reader::releaseAsFree, "nothing held");
  }

  @Test
  void fragmentOverrunningTheChunkIsAViolationButThePrefixIsKept() {
    chunkWith(3, 9, 0, new int[] {20, 5000}, true);
    assertEquals(ChunkReadResult.OK, reader.acquireCommitted(0, 3));
    assertTrue(reader.fragmentsMalformed());
    assertEquals(1, reader.fragmentsFound());
    assertEquals(24, reader.usedSize());
    assertEquals(1, reader.fragmentViolations());
    reader.releaseAsFree();
  }

  @Test
  void countLargerThanTheFragmentsStopsAtTheChunkEnd() {
    long c = chunkWith(0, 9, 0, new int[] {1012 - 4}, false);
    abi.incrementPacketCount(c); // claims a second fragment with no room left
    abi.releaseChunkAsComplete(c);
    assertEquals(ChunkReadResult.OK, reader.acquireCommitted(0, 0));
    assertEquals(1, reader.fragmentsFound());
    assertEquals(1012, reader.usedSize());
    assertTrue(reader.fragmentsMalformed());
    reader.releaseAsFree();
  }

  @Test
  void dropMarkerIsDataLossNotAViolation() {
    chunkWith(0, 3, 0, new int[] {8, PacketFragments.DROP_PACKET_MARKER}, true);
    assertEquals(ChunkReadResult.OK, reader.acquireCommitted(0, 0));
    assertTrue(reader.writerDataDrop());
    assertFalse(reader.fragmentsMalformed());
    assertEquals(1, reader.fragmentsFound());
    assertEquals(12, reader.usedSize());
    assertEquals(1, reader.writerDataDrops());
    reader.releaseAsFree();
  }

  @Test
  void releaseFailsWhenTheProducerTamperedWithThePage() {
    chunkWith(0, 3, 0, new int[] {8}, true);
    assertEquals(ChunkReadResult.OK, reader.acquireCommitted(0, 0));
    PageHeader.HEADER_BITMAP.setVolatile(smb, 0L, PageHeader.partitioned(PageLayout.DIV2) | 2);
    assertEquals(ChunkReadResult.RELEASE_FAILED, reader.releaseAsFree());
    assertEquals(1, reader.count(ChunkReadResult.RELEASE_FAILED));
  }

  @Test
  void scrapeReadsBeingWrittenChunksWithoutTheirLastFragment() {
    long c = chunkWith(1, 4, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK, new int[] {6}, false);
    int bitmap = abi.headerBitmap(0);
    assertEquals(0b10, UntrustedChunkReader.scrapableChunks(bitmap));
    assertEquals(ChunkReadResult.NOTHING_TO_SCRAPE, reader.scrape(0, bitmap, 1));
    abi.incrementPacketCount(c);
    for (int i = 0; i < 4; i++) {
      smb.set(ValueLayout.JAVA_BYTE, abi.payloadOffset(c) + 10 + i, (byte) 0x80); // unfinished size field
    }
    abi.setFlag(c, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK | ChunkHeader.CHUNK_NEEDS_PATCHING);
    assertEquals(ChunkReadResult.OK, reader.scrape(0, bitmap, 1));
    assertFalse(reader.complete());
    assertEquals(2, reader.packetCount());
    assertEquals(1, reader.usableFragments());
    assertEquals(10, reader.usedSize());
    assertFalse(reader.fragmentsMalformed());
    assertEquals(7, reader.flags());
    assertEquals(ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK, reader.effectiveFlags());
    assertEquals(ChunkState.BEING_WRITTEN, abi.chunkState(0, 1), "scraping changes no state");
    assertEquals(ChunkReadResult.WRONG_STATE, reader.scrape(0, bitmap, 0), "free chunk");
    abi.releaseChunkAsComplete(c);
    assertEquals(ChunkReadResult.OK, reader.scrape(0, abi.headerBitmap(0), 1));
    assertTrue(reader.complete());
    assertEquals(2, reader.usableFragments());
    assertTrue(reader.fragmentsMalformed(), "the second size field was never finished");
  }
}
