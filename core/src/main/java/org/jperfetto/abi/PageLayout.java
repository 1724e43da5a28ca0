package org.jperfetto.abi;

/**
 * How a page is cut into chunks: the 3-bit value in bits 28-30 of the page header. Values 6 and 7 are
 * reserved by the ABI and rejected by {@link #ofBits(int)}.
 *
 * <p>A page starts with its 8-byte {@link PageHeader}; chunk {@code i} of a layout with {@code n}
 * chunks starts at {@code 8 + i * chunkSize} where {@code chunkSize = ((pageSize - 8) / n) & ~3}, so
 * every chunk starts 4-byte aligned and the bytes left over at the end of the page stay unused.
 */
public enum PageLayout {
  /** The page is free and not cut into chunks yet (header word 0). */
  NOT_PARTITIONED(0, 0),
  /** One chunk of {@code pageSize - 8} bytes. */
  DIV1(1, 1),
  /** Two chunks. */
  DIV2(2, 2),
  /** Four chunks. */
  DIV4(3, 4),
  /** Seven chunks ({@code (4096 - 8) / 7} needs no alignment padding). */
  DIV7(4, 7),
  /** Fourteen chunks, the most the 28 state bits can describe. */
  DIV14(5, 14);

  /** Number of values the 3-bit field can take, including the reserved ones. */
  public static final int NUM_LAYOUT_VALUES = 8;

  /** Chunks per layout value, reserved values (6, 7) having none. Indexed by the 3-bit value. */
  static final int[] NUM_CHUNKS_BY_BITS = {0, 1, 2, 4, 7, 14, 0, 0};

  private static final PageLayout[] BY_BITS = values();

  private final int bits;
  private final int numChunks;

  PageLayout(int bits, int numChunks) {
    this.bits = bits;
    this.numChunks = numChunks;
  }

  /** The 3-bit value stored in the page header. */
  public int bits() {
    return bits;
  }

  /** Chunks in a page with this layout (0 for {@link #NOT_PARTITIONED}). */
  public int numChunks() {
    return numChunks;
  }

  /** Size of each chunk, chunk header included, in a page of {@code pageSize} bytes (0 if none). */
  public int chunkSize(int pageSize) {
    return chunkSize(pageSize, numChunks);
  }

  /** Offset of chunk {@code chunkIdx} from the start of its page. */
  public int chunkOffsetInPage(int pageSize, int chunkIdx) {
    if (chunkIdx < 0 || chunkIdx >= numChunks) {
      throw new IndexOutOfBoundsException(
          "chunk index out of layout: layout=" + this + " chunk=" + chunkIdx);
    }
    return PageHeader.SIZE + chunkIdx * chunkSize(pageSize);
  }

  /** The layout for a 3-bit value; the reserved values 6 and 7 (and anything else) are rejected. */
  public static PageLayout ofBits(int bits) {
    if (bits < 0 || bits >= BY_BITS.length) {
      throw new IllegalArgumentException("reserved or invalid page layout: " + bits);
    }
    return BY_BITS[bits];
  }

  /** True for the values 0..5 that name a layout. */
  public static boolean isDefined(int bits) {
    return bits >= 0 && bits < BY_BITS.length;
  }

  /** Largest 4-aligned size that fits {@code numChunks} times in the page after its header. */
  static int chunkSize(int pageSize, int numChunks) {
    return numChunks == 0 ? 0 : ((pageSize - PageHeader.SIZE) / numChunks) & ~3;
  }
}
