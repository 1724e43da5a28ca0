package org.jperfetto.service.buffer;

/**
 * The few SMB ABI constants the TraceBuffer needs: chunk header flag bits and packet-header facts.
 * Values are upstream's (shared_memory_abi.h, proto_utils.h).
 *
 * <p>To be replaced by org.jperfetto.abi constants when the abi package lands.
 */
final class ChunkFlags {
  /** The chunk's first fragment continues a packet begun in chunk id - 1 of the same writer. */
  static final int FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK = 1 << 0;
  /** The chunk's last fragment is continued in chunk id + 1 of the same writer. */
  static final int LAST_PACKET_CONTINUES_ON_NEXT_CHUNK = 1 << 1;
  /** The last (fragmented) packet still has size fields to be patched through CommitData. */
  static final int CHUNK_NEEDS_PATCHING = 1 << 2;
  /** The flags field of a chunk header is 6 bits wide. */
  static final int FLAGS_MASK = (1 << 6) - 1;

  /** Bytes a writer reserves for a fragment's size; also the size of one patch. */
  static final int PACKET_HEADER_SIZE = 4;
  /** Fragment size that marks a packet the writer had to drop (2^28 - 1). */
  static final long PACKET_SIZE_DROP_PACKET = (1L << 28) - 1;

  private ChunkFlags() {}
}
