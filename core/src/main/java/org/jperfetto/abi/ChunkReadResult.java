package org.jperfetto.abi;

/** Outcome of {@link UntrustedChunkReader} looking at one chunk a producer named. */
public enum ChunkReadResult {
  /** The chunk is valid; the reader's view describes it. */
  OK,
  /** A scrape found a chunk being written with fewer than two fragments: nothing finished to copy. */
  NOTHING_TO_SCRAPE,
  /** The page index is outside the SMB. */
  PAGE_OUT_OF_RANGE,
  /** The chunk index is negative or beyond the 14 chunks a page can have. */
  CHUNK_OUT_OF_RANGE,
  /** The page header holds a reserved layout value (6 or 7). */
  RESERVED_LAYOUT,
  /** The page is not partitioned, or its layout has no chunk with that index. */
  CHUNK_NOT_IN_LAYOUT,
  /** The chunk is not in the state the operation needs (COMPLETE to commit; used to scrape). */
  WRONG_STATE,
  /** The page header changed under the reader too often to acquire the chunk. */
  CONTENDED,
  /** writer_id is 0 or above the largest writer id. */
  BAD_WRITER_ID,
  /** Releasing the chunk as free failed: its page header was changed by the producer. */
  RELEASE_FAILED;

  /** True when the chunk was skipped because the producer broke the ABI (not a benign race). */
  public boolean isAbiViolation() {
    return switch (this) {
      case PAGE_OUT_OF_RANGE, CHUNK_OUT_OF_RANGE, RESERVED_LAYOUT, CHUNK_NOT_IN_LAYOUT, BAD_WRITER_ID,
          RELEASE_FAILED -> true;
      default -> false;
    };
  }
}
