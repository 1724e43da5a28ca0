package org.jperfetto.abi;

/**
 * A chunk acquired from a {@link SharedMemoryAbi}, encoded in a {@code long} so that acquiring and
 * releasing allocate nothing:
 *
 * <pre>
 *   63 ... 56   55 ........... 24   23 ........ 8   7 ...... 0
 *  +----------+-------------------+---------------+-----------+
 *  |    0     |    page index     |  chunk size   | chunk idx |
 *  +----------+-------------------+---------------+-----------+
 * </pre>
 *
 * {@link #INVALID} (negative) means the acquisition failed. The chunk size (header included) is
 * carried so that a release can check the page was not re-partitioned under it.
 */
public final class ChunkHandle {
  /** Returned when no chunk could be acquired. */
  public static final long INVALID = -1L;

  private ChunkHandle() {}

  static long of(int page, int chunkSize, int chunkIdx) {
    return ((long) page << 24) | ((long) chunkSize << 8) | chunkIdx;
  }

  /** True for a handle returned by a successful acquisition. */
  public static boolean isValid(long handle) {
    return handle >= 0;
  }

  /** Index of the page holding the chunk. */
  public static int page(long handle) {
    return (int) (handle >>> 24);
  }

  /** Index of the chunk within its page (0..13). */
  public static int chunkIndex(long handle) {
    return (int) (handle & 0xFF);
  }

  /** Size of the chunk in bytes, its header included. */
  public static int chunkSize(long handle) {
    return (int) ((handle >>> 8) & 0xFFFF);
  }

  /** Bytes available for fragments: chunk size minus the chunk header. */
  public static int payloadSize(long handle) {
    return chunkSize(handle) - ChunkHeader.SIZE;
  }

  /** For messages: {@code page=3 chunk=1 size=2044}. */
  public static String describe(long handle) {
    return isValid(handle)
        ? "page=" + page(handle) + " chunk=" + chunkIndex(handle) + " size=" + chunkSize(handle)
        : "invalid chunk";
  }
}
