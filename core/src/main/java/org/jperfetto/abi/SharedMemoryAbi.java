package org.jperfetto.abi;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * The chunk state machine over one shared memory buffer (SMB): a segment of {@code numPages} pages of
 * {@code pageSize} bytes, each page a {@link PageHeader} followed by the chunks of its
 * {@link PageLayout}. Producer and service each hold one over the same mapping.
 *
 * <p>Every state change is a CAS on the page's header word ({@code compareAndSet}, sequentially
 * consistent, which covers upstream's acq_rel). Chunks are named by {@link ChunkHandle} longs, so
 * nothing here allocates. The allowed transitions are upstream's:
 * <ul>
 *   <li>producer: NOT_PARTITIONED page to a layout with all chunks FREE ({@link #tryPartitionPage});
 *       FREE to BEING_WRITTEN ({@link #tryAcquireChunkForWriting}); BEING_WRITTEN to COMPLETE
 *       ({@link #releaseChunkAsComplete});</li>
 *   <li>service: COMPLETE to BEING_READ ({@link #tryAcquireChunkForReading}); BEING_READ to FREE
 *       ({@link #releaseChunkAsFree}), which returns the page to NOT_PARTITIONED when all its chunks
 *       are free.</li>
 * </ul>
 *
 * <p>Memory orders: the header word is loaded with acquire before a transition and with opaque
 * (upstream's relaxed) for advisory queries. A writer's chunk header is stored after its CAS: ids
 * opaque, then packets with release, so whoever loads packets with acquire sees the ids.
 * {@link #incrementPacketCount} and {@link #setFlag} are release stores by the owning writer.
 *
 * <p>The geometry (page size, page count) is fixed at construction and trusted; the contents of the
 * segment are not, and no method here reads outside a page it computed from the geometry. Service
 * code validating a producer's chunk goes through {@link UntrustedChunkReader}.
 */
public final class SharedMemoryAbi {
  /** Smallest page (and the page alignment of the SMB). */
  public static final int MIN_PAGE_SIZE = 4 * 1024;
  /** Largest page the ABI allows: chunk sizes must fit 16 bits. */
  public static final int MAX_PAGE_SIZE = 64 * 1024;
  /** Page index returned by a release that failed. */
  public static final int INVALID_PAGE = -1;

  private static final int RETRY_ATTEMPTS = 64;

  private final MemorySegment smb;
  private final int pageSize;
  private final int numPages;
  /** Chunk size per layout value, reserved values 0. */
  private final int[] chunkSizes = new int[PageLayout.NUM_LAYOUT_VALUES];

  /**
   * An ABI over {@code smb}, which must be native memory aligned to 4 KiB whose size is a multiple of
   * {@code pageSize}; the page size is a multiple of 4 KiB from 4 to 64 KiB.
   */
  public SharedMemoryAbi(MemorySegment smb, int pageSize) {
    if (!isValidPageSize(pageSize)) {
      throw new IllegalArgumentException("page size not a multiple of 4 KiB in [4, 64] KiB: " + pageSize);
    }
    if (!smb.isNative() || smb.address() % MIN_PAGE_SIZE != 0) {
      throw new IllegalArgumentException("SMB must be native memory aligned to 4 KiB: " + smb);
    }
    if (smb.byteSize() == 0 || smb.byteSize() % pageSize != 0 || smb.byteSize() / pageSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "SMB size not a positive multiple of the page size: size=" + smb.byteSize() + " page=" + pageSize);
    }
    this.smb = smb;
    this.pageSize = pageSize;
    this.numPages = (int) (smb.byteSize() / pageSize);
    for (int i = 0; i < chunkSizes.length; i++) {
      chunkSizes[i] = PageLayout.chunkSize(pageSize, PageLayout.NUM_CHUNKS_BY_BITS[i]);
    }
  }

  /** True for 4, 8, 12, ... 64 KiB: what the ABI can describe. */
  public static boolean isValidPageSize(int pageSize) {
    return pageSize >= MIN_PAGE_SIZE && pageSize <= MAX_PAGE_SIZE && pageSize % MIN_PAGE_SIZE == 0;
  }

  public MemorySegment segment() {
    return smb;
  }

  public int pageSize() {
    return pageSize;
  }

  public int numPages() {
    return numPages;
  }

  /** Offset of page {@code page} in the segment. */
  public long pageOffset(int page) {
    checkPage(page);
    return (long) page * pageSize;
  }

  /** The page header word, loaded with acquire. */
  public int headerBitmap(int page) {
    return (int) PageHeader.HEADER_BITMAP.getAcquire(smb, pageOffset(page));
  }

  /** The page header word, loaded opaque (no ordering): for hints only. */
  public int headerBitmapOpaque(int page) {
    return (int) PageHeader.HEADER_BITMAP.getOpaque(smb, pageOffset(page));
  }

  /** The layout of a page; a reserved layout value is an {@link IllegalStateException}. */
  public PageLayout pageLayout(int page) {
    int bits = PageHeader.layoutBits(headerBitmap(page));
    if (!PageLayout.isDefined(bits)) {
      throw new IllegalStateException("reserved page layout: page=" + page + " layout=" + bits);
    }
    return PageLayout.ofBits(bits);
  }

  /** Chunk size (header included) for a layout value of this SMB's page size; 0 if it has no chunks. */
  public int chunkSizeForLayoutBits(int layoutBits) {
    return chunkSizes[layoutBits & 0x7];
  }

  /** Hint: the page is not partitioned (header word 0). */
  public boolean isPageFree(int page) {
    return headerBitmapOpaque(page) == 0;
  }

  /** Hint: the page is partitioned and every chunk is COMPLETE. */
  public boolean isPageComplete(int page) {
    return PageHeader.isComplete(headerBitmapOpaque(page));
  }

  /** Bit N set when chunk N exists and is FREE; 0 for a page that is not partitioned. */
  public int getFreeChunks(int page) {
    return PageHeader.chunksInState(headerBitmapOpaque(page), ChunkState.FREE.bits());
  }

  /** The state of a chunk, from an opaque load of its page header (a hint). */
  public ChunkState chunkState(int page, int chunkIdx) {
    return PageHeader.chunkState(headerBitmapOpaque(page), chunkIdx);
  }

  /**
   * Partitions a NOT_PARTITIONED page into {@code layout} with all chunks FREE. Returns false if the
   * page was not free by then.
   */
  public boolean tryPartitionPage(int page, PageLayout layout) {
    if (layout == PageLayout.NOT_PARTITIONED) {
      throw new IllegalArgumentException("cannot partition a page as NOT_PARTITIONED: page=" + page);
    }
    return PageHeader.HEADER_BITMAP.compareAndSet(
        smb, pageOffset(page), PageHeader.ALL_CHUNKS_FREE, PageHeader.partitioned(layout));
  }

  /**
   * Moves a FREE chunk to BEING_WRITTEN and gives it a header: {@code chunkId}, {@code writerId} and
   * the initial {@code packets} ({@link ChunkHeader#packets(int, int)}). Returns the chunk, or
   * {@link ChunkHandle#INVALID} if the page does not have that chunk or it is not FREE.
   */
  public long tryAcquireChunkForWriting(int page, int chunkIdx, int chunkId, int writerId, short packets) {
    long chunk = tryAcquire(page, chunkIdx, ChunkState.FREE, ChunkState.BEING_WRITTEN);
    if (chunk != ChunkHandle.INVALID) {
      long off = chunkOffset(chunk);
      ChunkHeader.WRITER_ID.setOpaque(smb, off, (short) writerId);
      ChunkHeader.CHUNK_ID.setOpaque(smb, off, chunkId);
      ChunkHeader.PACKETS.setRelease(smb, off, packets);
    }
    return chunk;
  }

  /**
   * Moves a COMPLETE chunk to BEING_READ. Returns the chunk or {@link ChunkHandle#INVALID}. The
   * header and payload were published by the producer's release of the chunk, which this CAS
   * synchronises with; the producer must not touch them any more (a hostile one still may).
   */
  public long tryAcquireChunkForReading(int page, int chunkIdx) {
    return tryAcquire(page, chunkIdx, ChunkState.COMPLETE, ChunkState.BEING_READ);
  }

  /**
   * The chunk {@code chunkIdx} of a page as described by {@code bitmap}, without any state change;
   * for the service's scraping. Returns {@link ChunkHandle#INVALID} if the layout has no such chunk.
   */
  public long chunkUnchecked(int page, int bitmap, int chunkIdx) {
    checkPage(page);
    if (chunkIdx < 0 || chunkIdx >= PageHeader.numChunks(bitmap)) {
      return ChunkHandle.INVALID;
    }
    return ChunkHandle.of(page, chunkSizes[PageHeader.layoutBits(bitmap)], chunkIdx);
  }

  /** Moves a BEING_WRITTEN chunk to COMPLETE. Returns its page, or {@link #INVALID_PAGE}. */
  public int releaseChunkAsComplete(long chunk) {
    return release(chunk, ChunkState.BEING_WRITTEN, ChunkState.COMPLETE);
  }

  /**
   * Clears the chunk header and moves a BEING_READ chunk to FREE; when every chunk of the page is
   * then free the page becomes NOT_PARTITIONED. Returns its page, or {@link #INVALID_PAGE} if the
   * chunk was not BEING_READ or its page was re-partitioned.
   */
  public int releaseChunkAsFree(long chunk) {
    long off = chunkOffset(chunk);
    ChunkHeader.WRITER_ID.setOpaque(smb, off, (short) 0);
    ChunkHeader.CHUNK_ID.setOpaque(smb, off, 0);
    ChunkHeader.PACKETS.setRelease(smb, off, (short) 0);
    return release(chunk, ChunkState.BEING_READ, ChunkState.FREE);
  }

  /** Offset of the chunk (its header) in the segment. */
  public long chunkOffset(long chunk) {
    if (!ChunkHandle.isValid(chunk)) {
      throw new IllegalArgumentException("not a chunk: " + chunk);
    }
    return pageOffset(ChunkHandle.page(chunk)) + PageHeader.SIZE
        + (long) ChunkHandle.chunkIndex(chunk) * ChunkHandle.chunkSize(chunk);
  }

  /** Offset of the chunk's first fragment in the segment. */
  public long payloadOffset(long chunk) {
    return chunkOffset(chunk) + ChunkHeader.SIZE;
  }

  /** chunk_id (u32 bits in an int), opaque load. */
  public int chunkId(long chunk) {
    return (int) ChunkHeader.CHUNK_ID.getOpaque(smb, chunkOffset(chunk));
  }

  /** writer_id (0..65535), opaque load. */
  public int writerId(long chunk) {
    return Short.toUnsignedInt((short) ChunkHeader.WRITER_ID.getOpaque(smb, chunkOffset(chunk)));
  }

  /** The packets u16 (count and flags), acquire load. */
  public short packetsAcquire(long chunk) {
    return (short) ChunkHeader.PACKETS.getAcquire(smb, chunkOffset(chunk));
  }

  /**
   * Adds one to packets.count with a release store and returns the new count. Only the owning writer
   * calls this (the increment is not a CAS), before it starts the fragment it counts.
   */
  public int incrementPacketCount(long chunk) {
    long off = chunkOffset(chunk);
    short p = (short) ChunkHeader.PACKETS.getOpaque(smb, off);
    int count = (ChunkHeader.packetCount(p) + 1) & ChunkHeader.PACKET_COUNT_MASK;
    ChunkHeader.PACKETS.setRelease(smb, off, (short) ((p & ~ChunkHeader.PACKET_COUNT_MASK) | count));
    return count;
  }

  /** Sets packets.flags bits with a release store (owning writer only). */
  public void setFlag(long chunk, int flag) {
    long off = chunkOffset(chunk);
    short p = (short) ChunkHeader.PACKETS.getOpaque(smb, off);
    ChunkHeader.PACKETS.setRelease(smb, off,
        (short) (p | ((flag & ChunkHeader.PACKET_FLAGS_MASK) << ChunkHeader.PACKET_FLAGS_SHIFT)));
  }

  /** Clears CHUNK_NEEDS_PATCHING while the writer still owns the chunk (release store). */
  public void clearNeedsPatchingFlag(long chunk) {
    long off = chunkOffset(chunk);
    short p = (short) ChunkHeader.PACKETS.getOpaque(smb, off);
    ChunkHeader.PACKETS.setRelease(smb, off,
        (short) (p & ~(ChunkHeader.CHUNK_NEEDS_PATCHING << ChunkHeader.PACKET_FLAGS_SHIFT)));
  }

  private long tryAcquire(int page, int chunkIdx, ChunkState expected, ChunkState desired) {
    long pageOff = pageOffset(page);
    for (int attempt = 0; attempt < RETRY_ATTEMPTS; attempt++) {
      int bitmap = (int) PageHeader.HEADER_BITMAP.getAcquire(smb, pageOff);
      if (chunkIdx < 0 || chunkIdx >= PageHeader.numChunks(bitmap)
          || PageHeader.chunkStateBits(bitmap, chunkIdx) != expected.bits()) {
        return ChunkHandle.INVALID;
      }
      int next = PageHeader.withChunkState(bitmap, chunkIdx, desired.bits());
      if (PageHeader.HEADER_BITMAP.compareAndSet(smb, pageOff, bitmap, next)) {
        return ChunkHandle.of(page, chunkSizes[PageHeader.layoutBits(bitmap)], chunkIdx);
      }
      backOff(attempt);
    }
    return ChunkHandle.INVALID;
  }

  private int release(long chunk, ChunkState expected, ChunkState desired) {
    int page = ChunkHandle.page(chunk);
    int chunkIdx = ChunkHandle.chunkIndex(chunk);
    long pageOff = pageOffset(page);
    for (int attempt = 0; attempt < RETRY_ATTEMPTS; attempt++) {
      int bitmap = (int) PageHeader.HEADER_BITMAP.getOpaque(smb, pageOff);
      if (chunkSizes[PageHeader.layoutBits(bitmap)] != ChunkHandle.chunkSize(chunk)
          || chunkIdx >= PageHeader.numChunks(bitmap)
          || PageHeader.chunkStateBits(bitmap, chunkIdx) != expected.bits()) {
        return INVALID_PAGE;
      }
      int next = PageHeader.withChunkState(bitmap, chunkIdx, desired.bits());
      if ((next & PageHeader.ALL_CHUNKS_MASK) == PageHeader.ALL_CHUNKS_FREE) {
        next = 0;
      }
      if (PageHeader.HEADER_BITMAP.compareAndSet(smb, pageOff, bitmap, next)) {
        return page;
      }
      backOff(attempt);
    }
    return INVALID_PAGE;
  }

  /** Another chunk of the page changed state under us: yield, then sleep a little longer each time. */
  private static void backOff(int attempt) {
    if (attempt < RETRY_ATTEMPTS / 2) {
      Thread.yield();
    } else {
      LockSupport.parkNanos((attempt / 10) * 1_000_000L);
    }
  }

  private void checkPage(int page) {
    if (page < 0 || page >= numPages) {
      throw new IndexOutOfBoundsException("page out of SMB: page=" + page + " pages=" + numPages);
    }
  }
}
