package org.jperfetto.abi;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The 8-byte header at the start of every SMB page.
 *
 * <pre>
 *  offset 0: header_bitmap (u32, atomic)          offset 4: reserved (u32)
 *
 *  header_bitmap:
 *   31  30..28   27..26   25..24  ...   3..2     1..0
 *  +---+-------+--------+--------+-----+--------+--------+
 *  | R | layout| chunk13| chunk12| ... | chunk1 | chunk0 |
 *  +---+-------+--------+--------+-----+--------+--------+
 *   R: reserved.  layout: {@link PageLayout} (0 = not partitioned).  chunkN: {@link ChunkState}.
 * </pre>
 *
 * <p>The header word is the only word the producer and the service both change; every state change
 * is a compare-and-set on it. Values are little-endian, the byte order of every platform the ABI
 * supports; the class refuses to load on a big-endian machine.
 */
public final class PageHeader {
  /** Size of the header in bytes; chunks start right after it. */
  public static final int SIZE = 8;

  public static final StructLayout LAYOUT = MemoryLayout.structLayout(
      ValueLayout.JAVA_INT.withName("header_bitmap"),
      ValueLayout.JAVA_INT.withName("reserved"));

  /** Offset of header_bitmap within the header. */
  public static final long HEADER_BITMAP_OFFSET =
      LAYOUT.byteOffset(PathElement.groupElement("header_bitmap"));

  /**
   * header_bitmap as an int, coordinates {@code (MemorySegment, long pageOffset)}. Use
   * {@code getAcquire}, {@code getOpaque} (upstream's relaxed) or {@code compareAndSet}.
   */
  public static final VarHandle HEADER_BITMAP =
      LAYOUT.varHandle(PathElement.groupElement("header_bitmap")).withInvokeExactBehavior();

  /** Bits per chunk state. */
  public static final int CHUNK_STATE_SHIFT = 2;
  /** Mask of one chunk state, before shifting. */
  public static final int CHUNK_STATE_MASK = 0x3;
  /** Mask of the 3 layout bits. */
  public static final int LAYOUT_MASK = 0x7000_0000;
  /** Position of the layout bits. */
  public static final int LAYOUT_SHIFT = 28;
  /** The 28 bits holding the 14 chunk states. */
  public static final int ALL_CHUNKS_MASK = 0x0FFF_FFFF;
  /** All 14 chunk states COMPLETE (relies on COMPLETE == 3). */
  public static final int ALL_CHUNKS_COMPLETE = 0x0FFF_FFFF;
  /** All chunk states FREE (relies on FREE == 0). */
  public static final int ALL_CHUNKS_FREE = 0;
  /** Bit 31, reserved for future use. */
  public static final int RESERVED_BIT = 0x8000_0000;
  /** Upper bound of chunks in a page, fixed by the 28 state bits. */
  public static final int MAX_CHUNKS_PER_PAGE = 14;

  static {
    if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
      throw new ExceptionInInitializerError("the Perfetto SMB ABI is little-endian; this platform is not");
    }
  }

  private PageHeader() {}

  /** The layout bits (0..7, 6 and 7 reserved) of a header word. */
  public static int layoutBits(int bitmap) {
    return (bitmap & LAYOUT_MASK) >>> LAYOUT_SHIFT;
  }

  /** Chunks in the page according to a header word; 0 if not partitioned or reserved layout. */
  public static int numChunks(int bitmap) {
    return PageLayout.NUM_CHUNKS_BY_BITS[layoutBits(bitmap)];
  }

  /** The 2-bit state of chunk {@code chunkIdx} (0..13) in a header word. */
  public static int chunkStateBits(int bitmap, int chunkIdx) {
    return (bitmap >>> (chunkIdx * CHUNK_STATE_SHIFT)) & CHUNK_STATE_MASK;
  }

  /** The state of chunk {@code chunkIdx} in a header word. */
  public static ChunkState chunkState(int bitmap, int chunkIdx) {
    return ChunkState.ofBits(chunkStateBits(bitmap, chunkIdx));
  }

  /** A header word with chunk {@code chunkIdx} set to {@code stateBits}, other bits unchanged. */
  public static int withChunkState(int bitmap, int chunkIdx, int stateBits) {
    int shift = chunkIdx * CHUNK_STATE_SHIFT;
    return (bitmap & ~(CHUNK_STATE_MASK << shift)) | (stateBits << shift);
  }

  /** The header word of a freshly partitioned page: the layout, every chunk FREE. */
  public static int partitioned(PageLayout layout) {
    return (layout.bits() << LAYOUT_SHIFT) & LAYOUT_MASK;
  }

  /** Bitmap with bit N set when chunk N exists in the layout and is in state {@code stateBits}. */
  public static int chunksInState(int bitmap, int stateBits) {
    int n = numChunks(bitmap);
    int res = 0;
    for (int i = 0; i < n; i++) {
      if (chunkStateBits(bitmap, i) == stateBits) {
        res |= 1 << i;
      }
    }
    return res;
  }

  /** Bitmap with bit N set when chunk N exists in the layout and is not FREE. */
  public static int usedChunks(int bitmap) {
    int n = numChunks(bitmap);
    return chunksInState(bitmap, ChunkState.FREE.bits()) ^ ((1 << n) - 1);
  }

  /** True if the page is partitioned and all its chunks are COMPLETE. */
  public static boolean isComplete(int bitmap) {
    int n = numChunks(bitmap);
    if (n == 0) {
      return false;
    }
    int mask = (1 << (n * CHUNK_STATE_SHIFT)) - 1;
    return (bitmap & ALL_CHUNKS_MASK) == (ALL_CHUNKS_COMPLETE & mask);
  }
}
