package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The C++ static_asserts of upstream's shared_memory_abi, as tests: sizes, offsets, bits, values. */
class AbiConformanceTest {

  @Test
  void headerSizesAndOffsets() {
    assertEquals(8, PageHeader.SIZE);
    assertEquals(8, PageHeader.LAYOUT.byteSize());
    assertEquals(0, PageHeader.HEADER_BITMAP_OFFSET);
    assertEquals(8, ChunkHeader.SIZE);
    assertEquals(8, ChunkHeader.LAYOUT.byteSize());
    assertEquals(4, ChunkHeader.LAYOUT.byteAlignment());
    assertEquals(0, ChunkHeader.CHUNK_ID_OFFSET);
    assertEquals(4, ChunkHeader.WRITER_ID_OFFSET);
    assertEquals(6, ChunkHeader.PACKETS_OFFSET);
    assertEquals(4, PacketFragments.SIZE_FIELD_BYTES);
  }

  @Test
  void varHandlesAreExactOverSegmentAndOffset() {
    for (VarHandle vh : List.of(PageHeader.HEADER_BITMAP, ChunkHeader.CHUNK_ID, ChunkHeader.WRITER_ID,
        ChunkHeader.PACKETS)) {
      assertTrue(vh.hasInvokeExactBehavior());
      assertEquals(List.of(MemorySegment.class, long.class), vh.coordinateTypes());
    }
    assertEquals(int.class, PageHeader.HEADER_BITMAP.varType());
    assertEquals(int.class, ChunkHeader.CHUNK_ID.varType());
    assertEquals(short.class, ChunkHeader.WRITER_ID.varType());
    assertEquals(short.class, ChunkHeader.PACKETS.varType());
    assertEquals(MethodType.methodType(int.class, MemorySegment.class, long.class),
        PageHeader.HEADER_BITMAP.accessModeType(VarHandle.AccessMode.GET_ACQUIRE));
  }

  @Test
  void chunkStatesAndBitmapConstants() {
    assertEquals(0, ChunkState.FREE.bits(), "zeroed memory must read as free");
    assertEquals(1, ChunkState.BEING_WRITTEN.bits());
    assertEquals(2, ChunkState.BEING_READ.bits());
    assertEquals(3, ChunkState.COMPLETE.bits());
    assertEquals(0, PageHeader.ALL_CHUNKS_FREE);
    assertEquals(0x0FFFFFFF, PageHeader.ALL_CHUNKS_COMPLETE);
    assertEquals(ChunkState.COMPLETE.bits(), PageHeader.ALL_CHUNKS_COMPLETE & PageHeader.CHUNK_STATE_MASK);
    assertEquals(0x0FFFFFFF, PageHeader.ALL_CHUNKS_MASK);
    assertEquals(0x70000000, PageHeader.LAYOUT_MASK);
    assertEquals(28, PageHeader.LAYOUT_SHIFT);
    assertEquals(2, PageHeader.CHUNK_STATE_SHIFT);
    assertEquals(3, PageHeader.CHUNK_STATE_MASK);
    assertEquals(0x80000000, PageHeader.RESERVED_BIT);
    assertEquals(14, PageHeader.MAX_CHUNKS_PER_PAGE);
    assertEquals(PageHeader.ALL_CHUNKS_MASK,
        (1 << (PageHeader.MAX_CHUNKS_PER_PAGE * PageHeader.CHUNK_STATE_SHIFT)) - 1);
  }

  @Test
  void chunkHeaderBitsAndFlags() {
    assertEquals(1, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK);
    assertEquals(2, ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
    assertEquals(4, ChunkHeader.CHUNK_NEEDS_PATCHING);
    assertEquals(7, ChunkHeader.DEFINED_FLAGS_MASK);
    assertEquals(1023, ChunkHeader.MAX_PACKET_COUNT);
    assertEquals(32767, ChunkHeader.MAX_WRITER_ID);
    // count: bits 0-9, flags: bits 10-15 (GCC/Clang bit-field order on little-endian).
    assertEquals((short) 0x1901, ChunkHeader.packets(257, 6));
    assertEquals(257, ChunkHeader.packetCount((short) 0x1901));
    assertEquals(6, ChunkHeader.packetFlags((short) 0x1901));
    assertEquals((short) 0xFFFF, ChunkHeader.packets(1023, 63));
    assertEquals(1023, ChunkHeader.packetCount((short) 0xFFFF));
    assertEquals(63, ChunkHeader.packetFlags((short) 0xFFFF));
    assertEquals((short) 0x0400, ChunkHeader.packets(0, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK));
  }

  @Test
  void pageLayoutValues() {
    int[] bits = {0, 1, 2, 3, 4, 5};
    int[] chunks = {0, 1, 2, 4, 7, 14};
    PageLayout[] all = PageLayout.values();
    assertEquals(6, all.length);
    for (int i = 0; i < all.length; i++) {
      assertEquals(bits[i], all[i].bits());
      assertEquals(chunks[i], all[i].numChunks());
      assertEquals(all[i], PageLayout.ofBits(bits[i]));
    }
    assertThrows(IllegalArgumentException.class, () -> PageLayout.ofBits(6));
    assertThrows(IllegalArgumentException.class, () -> PageLayout.ofBits(7));
    assertFalse(PageLayout.isDefined(6));
    assertFalse(PageLayout.isDefined(7));
    assertEquals(0, PageHeader.numChunks(6 << 28));
    assertEquals(0, PageHeader.numChunks(7 << 28));
  }

  static List<Arguments> chunkSizes() {
    // Upstream: ((page_size - sizeof(PageHeader)) / divider) & ~3, for Div1, Div2, Div4, Div7, Div14.
    return List.of(
        Arguments.of(4096, new int[] {4088, 2044, 1020, 584, 292}),
        Arguments.of(8192, new int[] {8184, 4092, 2044, 1168, 584}),
        Arguments.of(16384, new int[] {16376, 8188, 4092, 2336, 1168}),
        Arguments.of(32768, new int[] {32760, 16380, 8188, 4680, 2340}),
        Arguments.of(65536, new int[] {65528, 32764, 16380, 9360, 4680}));
  }

  @ParameterizedTest
  @MethodSource("chunkSizes")
  void chunkSizesAndOffsetsPerLayout(int pageSize, int[] expected) {
    PageLayout[] layouts = {PageLayout.DIV1, PageLayout.DIV2, PageLayout.DIV4, PageLayout.DIV7, PageLayout.DIV14};
    assertEquals(0, PageLayout.NOT_PARTITIONED.chunkSize(pageSize));
    try (Arena arena = Arena.ofConfined()) {
      SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(pageSize, SharedMemoryAbi.MIN_PAGE_SIZE), pageSize);
      for (int l = 0; l < layouts.length; l++) {
        PageLayout layout = layouts[l];
        assertEquals(expected[l], layout.chunkSize(pageSize), layout + " @ " + pageSize);
        assertEquals(expected[l], abi.chunkSizeForLayoutBits(layout.bits()));
        assertTrue(expected[l] <= 0xFFFF, "chunk size fits u16");
        for (int c = 0; c < layout.numChunks(); c++) {
          assertEquals(8 + c * expected[l], layout.chunkOffsetInPage(pageSize, c));
          long h = abi.chunkUnchecked(0, PageHeader.partitioned(layout), c);
          assertEquals(8 + c * expected[l], abi.chunkOffset(h));
          assertEquals(expected[l] - 8, ChunkHandle.payloadSize(h));
        }
        assertThrows(IndexOutOfBoundsException.class, () -> layout.chunkOffsetInPage(pageSize, layout.numChunks()));
      }
      assertEquals(0, abi.chunkSizeForLayoutBits(6));
      assertEquals(0, abi.chunkSizeForLayoutBits(7));
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1024, 4095, 4097, 6144, 69632, 131072})
  void invalidPageSizesAreRejected(int pageSize) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(131072, SharedMemoryAbi.MIN_PAGE_SIZE);
      assertFalse(SharedMemoryAbi.isValidPageSize(pageSize));
      assertThrows(IllegalArgumentException.class, () -> new SharedMemoryAbi(smb, pageSize));
    }
  }

  @Test
  void smbMustBeNativeAlignedAndWholePages() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(3 * 4096, 4096);
      assertThrows(IllegalArgumentException.class, () -> new SharedMemoryAbi(smb.asSlice(8), 4096));
      assertThrows(IllegalArgumentException.class, () -> new SharedMemoryAbi(smb.asSlice(0, 4096 + 4), 4096));
      assertThrows(IllegalArgumentException.class, () -> new SharedMemoryAbi(smb, 8192));
      assertThrows(IllegalArgumentException.class,
          () -> new SharedMemoryAbi(MemorySegment.ofArray(new byte[4096]), 4096));
      assertEquals(3, new SharedMemoryAbi(smb, 4096).numPages());
    }
  }

  @Test
  void zeroedMemoryReadsAsFreeUnpartitionedPages() {
    try (Arena arena = Arena.ofConfined()) {
      SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(4 * 8192, 4096), 8192);
      for (int p = 0; p < abi.numPages(); p++) {
        assertTrue(abi.isPageFree(p));
        assertEquals(PageLayout.NOT_PARTITIONED, abi.pageLayout(p));
        assertEquals(0, abi.getFreeChunks(p));
        assertFalse(abi.isPageComplete(p));
        assertEquals(ChunkState.FREE, abi.chunkState(p, 0));
      }
    }
  }
}
