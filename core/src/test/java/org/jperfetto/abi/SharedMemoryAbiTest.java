package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each upstream transition, and the ones upstream forbids. */
class SharedMemoryAbiTest {
  private final Arena arena = Arena.ofConfined();
  private final SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(4 * 4096, 4096), 4096);

  @AfterEach
  void close() {
    arena.close();
  }

  @Test
  void partitionOnlyAFreePage() {
    assertTrue(abi.tryPartitionPage(1, PageLayout.DIV4));
    assertEquals(PageLayout.DIV4, abi.pageLayout(1));
    assertEquals(0x30000000, abi.headerBitmap(1));
    assertEquals(0b1111, abi.getFreeChunks(1));
    assertFalse(abi.isPageFree(1));
    assertFalse(abi.tryPartitionPage(1, PageLayout.DIV2), "already partitioned");
    assertThrows(IllegalArgumentException.class, () -> abi.tryPartitionPage(2, PageLayout.NOT_PARTITIONED));
    assertThrows(IndexOutOfBoundsException.class, () -> abi.tryPartitionPage(4, PageLayout.DIV1));
  }

  @Test
  void fullCycleWriteCompleteReadFree() {
    assertTrue(abi.tryPartitionPage(0, PageLayout.DIV2));
    assertEquals(ChunkHandle.INVALID, abi.tryAcquireChunkForWriting(0, 2, 1, 1, (short) 0), "no chunk 2 in Div2");
    long w = abi.tryAcquireChunkForWriting(0, 1, 0xCAFEBABE, 7, ChunkHeader.packets(1, 1));
    assertTrue(ChunkHandle.isValid(w));
    assertEquals(0, ChunkHandle.page(w));
    assertEquals(1, ChunkHandle.chunkIndex(w));
    assertEquals(2044, ChunkHandle.chunkSize(w));
    assertEquals(8 + 2044, abi.chunkOffset(w));
    assertEquals(ChunkState.BEING_WRITTEN, abi.chunkState(0, 1));
    assertEquals(0b01, abi.getFreeChunks(0));
    assertEquals(0xCAFEBABE, abi.chunkId(w));
    assertEquals(7, abi.writerId(w));
    assertEquals(ChunkHeader.packets(1, 1), abi.packetsAcquire(w));
    assertEquals(ChunkHandle.INVALID, abi.tryAcquireChunkForWriting(0, 1, 2, 2, (short) 0), "owned");
    assertEquals(ChunkHandle.INVALID, abi.tryAcquireChunkForReading(0, 1), "not complete");

    assertEquals(2, abi.incrementPacketCount(w));
    abi.setFlag(w, ChunkHeader.CHUNK_NEEDS_PATCHING);
    abi.setFlag(w, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
    assertEquals(ChunkHeader.packets(2, 7), abi.packetsAcquire(w));
    abi.clearNeedsPatchingFlag(w);
    assertEquals(ChunkHeader.packets(2, 3), abi.packetsAcquire(w));

    assertEquals(SharedMemoryAbi.INVALID_PAGE, abi.releaseChunkAsFree(w), "free from BEING_WRITTEN is refused");
    assertEquals(ChunkState.BEING_WRITTEN, abi.chunkState(0, 1));
    // the refused release still cleared the header (as upstream does); restore it for the rest
    abi.incrementPacketCount(w);
    assertEquals(0, abi.releaseChunkAsComplete(w));
    assertEquals(ChunkState.COMPLETE, abi.chunkState(0, 1));
    assertEquals(SharedMemoryAbi.INVALID_PAGE, abi.releaseChunkAsComplete(w), "already complete");
    assertFalse(abi.isPageComplete(0), "chunk 0 still free");

    long r = abi.tryAcquireChunkForReading(0, 1);
    assertEquals(w, r);
    assertEquals(ChunkState.BEING_READ, abi.chunkState(0, 1));
    assertEquals(ChunkHandle.INVALID, abi.tryAcquireChunkForReading(0, 1));
    assertEquals(0, abi.releaseChunkAsFree(r));
    assertEquals(0, abi.headerBitmap(0), "all chunks free: page back to NOT_PARTITIONED");
    assertEquals(0, abi.chunkId(r));
    assertEquals(0, abi.writerId(r));
    assertEquals(0, abi.packetsAcquire(r));
  }

  @Test
  void pageStaysPartitionedWhileAChunkIsUsed() {
    assertTrue(abi.tryPartitionPage(3, PageLayout.DIV14));
    long a = abi.tryAcquireChunkForWriting(3, 0, 1, 1, (short) 0);
    long b = abi.tryAcquireChunkForWriting(3, 13, 2, 1, (short) 0);
    assertEquals(3, abi.releaseChunkAsComplete(a));
    assertEquals(3, abi.releaseChunkAsComplete(b));
    assertEquals(3, abi.releaseChunkAsFree(abi.tryAcquireChunkForReading(3, 0)));
    assertEquals(PageLayout.DIV14, abi.pageLayout(3));
    assertEquals(ChunkState.COMPLETE, abi.chunkState(3, 13));
    assertEquals(3, abi.releaseChunkAsFree(abi.tryAcquireChunkForReading(3, 13)));
    assertTrue(abi.isPageFree(3));
  }

  @Test
  void pageCompleteOnlyWhenEveryChunkIs() {
    assertTrue(abi.tryPartitionPage(2, PageLayout.DIV7));
    for (int c = 0; c < 7; c++) {
      assertFalse(abi.isPageComplete(2));
      abi.releaseChunkAsComplete(abi.tryAcquireChunkForWriting(2, c, c, 1, (short) 0));
    }
    assertTrue(abi.isPageComplete(2));
    assertEquals(0x4000_0000 | 0x3FFF, abi.headerBitmap(2), "Div7, chunks 0-6 COMPLETE");
  }

  @Test
  void releaseRefusesAPageRepartitionedUnderIt() {
    assertTrue(abi.tryPartitionPage(0, PageLayout.DIV1));
    long w = abi.tryAcquireChunkForWriting(0, 0, 1, 1, (short) 0);
    // a hostile peer rewrites the page header to another layout
    PageHeader.HEADER_BITMAP.setVolatile(abi.segment(), 0L,
        PageHeader.withChunkState(PageHeader.partitioned(PageLayout.DIV2), 0, 1));
    assertEquals(SharedMemoryAbi.INVALID_PAGE, abi.releaseChunkAsComplete(w));
    PageHeader.HEADER_BITMAP.setVolatile(abi.segment(), 0L, 6 << 28 | 1);
    assertEquals(SharedMemoryAbi.INVALID_PAGE, abi.releaseChunkAsComplete(w));
    assertThrows(IllegalStateException.class, () -> abi.pageLayout(0));
    assertEquals(ChunkHandle.INVALID, abi.tryAcquireChunkForReading(0, 0));
  }

  @Test
  void packetCountWrapsWithinTenBitsAndKeepsFlags() {
    assertTrue(abi.tryPartitionPage(0, PageLayout.DIV1));
    long w = abi.tryAcquireChunkForWriting(0, 0, 1, 1, ChunkHeader.packets(1022, 5));
    assertEquals(1023, abi.incrementPacketCount(w));
    assertEquals(0, abi.incrementPacketCount(w));
    assertEquals(5, ChunkHeader.packetFlags(abi.packetsAcquire(w)));
  }

  @Test
  void bitmapHelpers() {
    int b = PageHeader.partitioned(PageLayout.DIV4);
    b = PageHeader.withChunkState(b, 0, ChunkState.BEING_WRITTEN.bits());
    b = PageHeader.withChunkState(b, 2, ChunkState.COMPLETE.bits());
    b = PageHeader.withChunkState(b, 3, ChunkState.BEING_READ.bits());
    assertEquals(0x30000000 | 0b10_11_00_01, b);
    assertEquals(0b1101, PageHeader.usedChunks(b));
    assertEquals(0b0010, PageHeader.chunksInState(b, ChunkState.FREE.bits()));
    assertEquals(0b0100, PageHeader.chunksInState(b, ChunkState.COMPLETE.bits()));
    assertEquals(0b0101, UntrustedChunkReader.scrapableChunks(b));
    assertEquals(ChunkState.BEING_READ, PageHeader.chunkState(b, 3));
    assertFalse(PageHeader.isComplete(b));
    assertTrue(PageHeader.isComplete(PageHeader.partitioned(PageLayout.DIV4) | 0xFF));
    assertFalse(PageHeader.isComplete(0x0FFFFFFF), "not partitioned");
    assertFalse(PageHeader.isComplete(6 << 28 | 0x0FFFFFFF), "reserved layout");
    assertEquals(0, PageHeader.usedChunks(7 << 28 | 0x0FFFFFFF));
    assertTrue(PageHeader.isComplete(PageHeader.partitioned(PageLayout.DIV14) | PageHeader.ALL_CHUNKS_COMPLETE));
    assertEquals(PageHeader.partitioned(PageLayout.DIV14) | PageHeader.RESERVED_BIT,
        PageHeader.withChunkState(PageHeader.partitioned(PageLayout.DIV14) | PageHeader.RESERVED_BIT, 13, 0));
  }
}
