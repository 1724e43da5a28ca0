package org.jperfetto.abi;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The 8-byte header at the start of every chunk, followed by the chunk's fragments.
 *
 * <pre>
 *  offset 0: chunk_id  (u32, atomic)   monotonic per writer; set when the chunk is acquired
 *  offset 4: writer_id (u16, atomic)   unique within the producer; set when the chunk is acquired
 *  offset 6: packets   (u16, atomic)   bit-field, little-endian:
 *
 *     15 .......... 10   9 .................. 0
 *    +-----------------+-----------------------+
 *    |   flags (6)     |      count (10)       |
 *    +-----------------+-----------------------+
 *    flags: bit 0 FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK, bit 1 LAST_PACKET_CONTINUES_ON_NEXT_CHUNK,
 *           bit 2 CHUNK_NEEDS_PATCHING, bits 3-5 unused.
 * </pre>
 *
 * <p>{@code count} counts fragments: the producer increments it (release store) when it starts a
 * fragment, so in a chunk still being written the last counted fragment may be unfinished.
 * The u16 fields are only loaded with acquire (or opaque) and stored with release; nothing CASes them.
 */
public final class ChunkHeader {
  /** Size of the header in bytes; the first fragment starts right after it. */
  public static final int SIZE = 8;

  public static final StructLayout LAYOUT = MemoryLayout.structLayout(
      ValueLayout.JAVA_INT.withName("chunk_id"),
      ValueLayout.JAVA_SHORT.withName("writer_id"),
      ValueLayout.JAVA_SHORT.withName("packets"));

  public static final long CHUNK_ID_OFFSET = LAYOUT.byteOffset(PathElement.groupElement("chunk_id"));
  public static final long WRITER_ID_OFFSET = LAYOUT.byteOffset(PathElement.groupElement("writer_id"));
  public static final long PACKETS_OFFSET = LAYOUT.byteOffset(PathElement.groupElement("packets"));

  /** chunk_id (u32 as int), coordinates {@code (MemorySegment, long chunkOffset)}. */
  public static final VarHandle CHUNK_ID =
      LAYOUT.varHandle(PathElement.groupElement("chunk_id")).withInvokeExactBehavior();
  /** writer_id (u16 as short), coordinates {@code (MemorySegment, long chunkOffset)}. */
  public static final VarHandle WRITER_ID =
      LAYOUT.varHandle(PathElement.groupElement("writer_id")).withInvokeExactBehavior();
  /** packets (u16 as short: count and flags), coordinates {@code (MemorySegment, long chunkOffset)}. */
  public static final VarHandle PACKETS =
      LAYOUT.varHandle(PathElement.groupElement("packets")).withInvokeExactBehavior();

  /** Mask of packets.count (bits 0-9). */
  public static final int PACKET_COUNT_MASK = 0x3FF;
  /** Largest packets.count. */
  public static final int MAX_PACKET_COUNT = (1 << 10) - 1;
  /** Position of packets.flags. */
  public static final int PACKET_FLAGS_SHIFT = 10;
  /** Mask of packets.flags (6 bits), before shifting. */
  public static final int PACKET_FLAGS_MASK = 0x3F;
  /** The flags upstream defines (bits 0-2). */
  public static final int DEFINED_FLAGS_MASK = 0x7;

  /** The first fragment continues a packet from chunk_id - 1 of the same writer. */
  public static final int FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK = 1 << 0;
  /** The last fragment continues on chunk_id + 1 of the same writer. */
  public static final int LAST_PACKET_CONTINUES_ON_NEXT_CHUNK = 1 << 1;
  /** The last packet has size fields still to be patched through CommitData. */
  public static final int CHUNK_NEEDS_PATCHING = 1 << 2;

  /** Largest writer id (upstream kMaxWriterID); 0 is never a writer. */
  public static final int MAX_WRITER_ID = (1 << 15) - 1;

  private ChunkHeader() {}

  /** The packets u16 for a fragment count and flags. */
  public static short packets(int count, int flags) {
    return (short) ((count & PACKET_COUNT_MASK) | ((flags & PACKET_FLAGS_MASK) << PACKET_FLAGS_SHIFT));
  }

  /** packets.count of a packets u16. */
  public static int packetCount(short packets) {
    return packets & PACKET_COUNT_MASK;
  }

  /** packets.flags of a packets u16. */
  public static int packetFlags(short packets) {
    return (packets >>> PACKET_FLAGS_SHIFT) & PACKET_FLAGS_MASK;
  }
}
