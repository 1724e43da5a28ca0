package org.jperfetto.abi;

import java.lang.foreign.MemorySegment;

/**
 * The service's view of chunks in a producer's SMB, whose contents the producer controls and may
 * corrupt at any time. Every index, state, header field and fragment size is checked against the
 * trusted geometry of the {@link SharedMemoryAbi}; a bad chunk yields a {@link ChunkReadResult}, is
 * counted and skipped. Nothing here throws on bad input, loops more than {@code packets.count}
 * (at most 1023) times per chunk, or reads outside the chunk.
 *
 * <p>One reader per service thread: it is a reusable cursor (no allocation) whose getters describe
 * the last chunk read with result {@link ChunkReadResult#OK}.
 *
 * <p>Two ways in, as upstream's service has them:
 * <ul>
 *   <li>{@link #acquireCommitted} on CommitData: the chunk must be COMPLETE; it is moved to
 *       BEING_READ and held until {@link #releaseAsFree()}. Copy {@link #payloadOffset()} ..
 *       {@code + usedSize()} out first. The producer can still scribble on the bytes while they are
 *       copied, so the copy must be treated as untrusted again.</li>
 *   <li>{@link #scrape} on flush: a chunk that is COMPLETE or BEING_WRITTEN is read in place without
 *       changing its state; in a chunk being written the last counted fragment may be unfinished, so
 *       only the fragments before it are usable and at least two must be counted.</li>
 * </ul>
 */
public final class UntrustedChunkReader {
  private final SharedMemoryAbi abi;
  private final MemorySegment smb;
  private final long[] counts = new long[ChunkReadResult.values().length];
  private long fragmentViolations;
  private long writerDataDrops;

  private long held = ChunkHandle.INVALID;
  private long chunk = ChunkHandle.INVALID;
  private boolean complete;
  private int chunkId;
  private int writerId;
  private int packetCount;
  private int flags;
  private int usableFragments;
  private int fragmentsFound;
  private int usedSize;
  private boolean writerDataDrop;
  private boolean fragmentsMalformed;

  public UntrustedChunkReader(SharedMemoryAbi abi) {
    this.abi = abi;
    this.smb = abi.segment();
  }

  /**
   * CommitData: validates the chunk, moves it from COMPLETE to BEING_READ and fills the view. On any
   * result but OK the chunk is not held. On OK the caller must call {@link #releaseAsFree()}.
   */
  public ChunkReadResult acquireCommitted(int page, int chunkIdx) {
    if (held != ChunkHandle.INVALID) {
      throw new IllegalStateException("previous chunk still held: " + ChunkHandle.describe(held));
    }
    ChunkReadResult r = checkPlace(page, chunkIdx);
    if (r != ChunkReadResult.OK) {
      return counted(r);
    }
    int bitmap = abi.headerBitmap(page);
    r = checkLayout(bitmap, chunkIdx);
    if (r != ChunkReadResult.OK) {
      return counted(r);
    }
    if (PageHeader.chunkStateBits(bitmap, chunkIdx) != ChunkState.COMPLETE.bits()) {
      return counted(ChunkReadResult.WRONG_STATE);
    }
    long c = abi.tryAcquireChunkForReading(page, chunkIdx);
    if (c == ChunkHandle.INVALID) {
      // Lost a race or the producer changed the page: tell which by looking again.
      int now = abi.headerBitmapOpaque(page);
      r = checkLayout(now, chunkIdx);
      return counted(r != ChunkReadResult.OK ? r
          : PageHeader.chunkStateBits(now, chunkIdx) != ChunkState.COMPLETE.bits()
              ? ChunkReadResult.WRONG_STATE : ChunkReadResult.CONTENDED);
    }
    held = c;
    r = fill(c, true, abi.packetsAcquire(c));
    if (r != ChunkReadResult.OK) {
      ChunkReadResult released = releaseHeld();
      return counted(released == ChunkReadResult.OK ? r : released);
    }
    return counted(r);
  }

  /** Frees the chunk held since {@link #acquireCommitted}: OK, or RELEASE_FAILED (counted). */
  public ChunkReadResult releaseAsFree() {
    if (held == ChunkHandle.INVALID) {
      throw new IllegalStateException("no chunk held");
    }
    ChunkReadResult r = releaseHeld();
    if (r != ChunkReadResult.OK) {
      counts[r.ordinal()]++;
    }
    return r;
  }

  /**
   * Flush-time scrape: reads a COMPLETE or BEING_WRITTEN chunk in place, as described by
   * {@code bitmap} (the page header word the caller loaded with acquire, e.g. via
   * {@link SharedMemoryAbi#headerBitmap}). The state is not changed.
   */
  public ChunkReadResult scrape(int page, int bitmap, int chunkIdx) {
    ChunkReadResult r = checkPlace(page, chunkIdx);
    if (r == ChunkReadResult.OK) {
      r = checkLayout(bitmap, chunkIdx);
    }
    if (r != ChunkReadResult.OK) {
      return counted(r);
    }
    int state = PageHeader.chunkStateBits(bitmap, chunkIdx);
    if (state != ChunkState.COMPLETE.bits() && state != ChunkState.BEING_WRITTEN.bits()) {
      return counted(ChunkReadResult.WRONG_STATE);
    }
    long c = abi.chunkUnchecked(page, bitmap, chunkIdx);
    boolean isComplete = state == ChunkState.COMPLETE.bits();
    short packets = abi.packetsAcquire(c);
    if (!isComplete && ChunkHeader.packetCount(packets) < 2) {
      return counted(ChunkReadResult.NOTHING_TO_SCRAPE);
    }
    return counted(fill(c, isComplete, packets));
  }

  /** Bit N set for each chunk of the page header word worth scraping (BEING_WRITTEN or COMPLETE). */
  public static int scrapableChunks(int bitmap) {
    return PageHeader.chunksInState(bitmap, ChunkState.BEING_WRITTEN.bits())
        | PageHeader.chunksInState(bitmap, ChunkState.COMPLETE.bits());
  }

  private ChunkReadResult checkPlace(int page, int chunkIdx) {
    if (page < 0 || page >= abi.numPages()) {
      return ChunkReadResult.PAGE_OUT_OF_RANGE;
    }
    if (chunkIdx < 0 || chunkIdx >= PageHeader.MAX_CHUNKS_PER_PAGE) {
      return ChunkReadResult.CHUNK_OUT_OF_RANGE;
    }
    return ChunkReadResult.OK;
  }

  private static ChunkReadResult checkLayout(int bitmap, int chunkIdx) {
    int layout = PageHeader.layoutBits(bitmap);
    if (!PageLayout.isDefined(layout)) {
      return ChunkReadResult.RESERVED_LAYOUT;
    }
    if (chunkIdx >= PageHeader.numChunks(bitmap)) {
      return ChunkReadResult.CHUNK_NOT_IN_LAYOUT;
    }
    return ChunkReadResult.OK;
  }

  private ChunkReadResult fill(long c, boolean isComplete, short packets) {
    int writer = abi.writerId(c);
    if (writer == 0 || writer > ChunkHeader.MAX_WRITER_ID) {
      return ChunkReadResult.BAD_WRITER_ID;
    }
    chunk = c;
    complete = isComplete;
    writerId = writer;
    chunkId = abi.chunkId(c);
    packetCount = ChunkHeader.packetCount(packets);
    flags = ChunkHeader.packetFlags(packets);
    usableFragments = complete ? packetCount : Math.max(0, packetCount - 1);
    walkFragments(abi.payloadOffset(c), abi.payloadOffset(c) + ChunkHandle.payloadSize(c));
    return ChunkReadResult.OK;
  }

  /** Sums the usable fragments' sizes like upstream's service, stopping at the first bad one. */
  private void walkFragments(long begin, long end) {
    long pos = begin;
    int found = 0;
    boolean drop = false;
    boolean malformed = false;
    while (found < usableFragments) {
      long decoded = PacketFragments.decodeSize(smb, pos, end);
      if (decoded < 0) {
        malformed = true;
        break;
      }
      int size = PacketFragments.size(decoded);
      if (size == PacketFragments.DROP_PACKET_MARKER) {
        drop = true;
        break;
      }
      long payload = pos + PacketFragments.headerBytes(decoded);
      if (size > end - payload) {
        malformed = true;
        break;
      }
      pos = payload + size;
      found++;
    }
    fragmentsFound = found;
    usedSize = (int) (pos - begin);
    writerDataDrop = drop;
    fragmentsMalformed = malformed;
    if (drop) {
      writerDataDrops++;
    }
    if (malformed) {
      fragmentViolations++;
    }
  }

  private ChunkReadResult releaseHeld() {
    long c = held;
    held = ChunkHandle.INVALID;
    return abi.releaseChunkAsFree(c) == SharedMemoryAbi.INVALID_PAGE
        ? ChunkReadResult.RELEASE_FAILED : ChunkReadResult.OK;
  }

  private ChunkReadResult counted(ChunkReadResult r) {
    counts[r.ordinal()]++;
    return r;
  }

  /** The chunk of the last OK read. */
  public long chunk() {
    return chunk;
  }

  /** True if the last OK chunk was COMPLETE (false: scraped while being written). */
  public boolean complete() {
    return complete;
  }

  /** chunk_id as an unsigned 32-bit value in an int. */
  public int chunkId() {
    return chunkId;
  }

  /** writer_id, 1..{@link ChunkHeader#MAX_WRITER_ID}. */
  public int writerId() {
    return writerId;
  }

  /** packets.count as the header states it. */
  public int packetCount() {
    return packetCount;
  }

  /** packets.flags as the header states it. */
  public int flags() {
    return flags;
  }

  /**
   * The flags that apply to the usable fragments: for a chunk scraped while being written, its last
   * fragment is not usable, so the flags about the last packet are cleared (as upstream's buffer does).
   */
  public int effectiveFlags() {
    return complete ? flags
        : flags & ~(ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK | ChunkHeader.CHUNK_NEEDS_PATCHING);
  }

  /** Fragments the service may use: packetCount, minus the unfinished one when scraped. */
  public int usableFragments() {
    return usableFragments;
  }

  /** Fragments that were found intact (fewer than usable if malformed or a drop marker). */
  public int fragmentsFound() {
    return fragmentsFound;
  }

  /** Offset of the chunk's first fragment in the SMB segment. */
  public long payloadOffset() {
    return abi.payloadOffset(chunk);
  }

  /** The chunk size minus its header: every byte the producer could have written. */
  public int payloadSize() {
    return ChunkHandle.payloadSize(chunk);
  }

  /** Bytes of the intact fragments, size fields included (upstream's SUM(fragment sizes)). */
  public int usedSize() {
    return usedSize;
  }

  /** True if the fragments ended with the drop-packet marker (writer data loss, not an ABI error). */
  public boolean writerDataDrop() {
    return writerDataDrop;
  }

  /** True if a fragment size ran past the chunk or was not a 1-4 byte varint (an ABI violation). */
  public boolean fragmentsMalformed() {
    return fragmentsMalformed;
  }

  /** How many reads ended with {@code result}. */
  public long count(ChunkReadResult result) {
    return counts[result.ordinal()];
  }

  /** Chunks whose fragments were malformed (they were still read up to the bad fragment). */
  public long fragmentViolations() {
    return fragmentViolations;
  }

  /** Chunks that ended with the drop-packet marker. */
  public long writerDataDrops() {
    return writerDataDrops;
  }
}
