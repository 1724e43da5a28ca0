package org.jperfetto.abi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.wire.Varints;

/**
 * The size prefix of each fragment in a chunk: a varint of the fragment's payload size. What is
 * the SMB's here is the rule, not the varint arithmetic ({@link Varints} has that): how many bytes a
 * writer reserves, which sizes it may compact, the drop marker, and how much of a size a reader
 * accepts.
 *
 * <p>Writers reserve {@link #SIZE_FIELD_BYTES} bytes before they know the size and fill them with a
 * redundant varint ({@link Varints#writeRedundant}). Since v58 upstream writers compact a fragment
 * of at most {@link #MAX_COMPACT_SIZE} bytes that fits in its chunk to a 1-byte size, moving its
 * payload 3 bytes back, so readers accept any varint of 1 to 4 bytes. The size
 * {@link #DROP_PACKET_MARKER} marks a packet the writer abandoned (the SMB was full).
 */
public final class PacketFragments {
  /** Bytes a writer reserves for a fragment's size (upstream kPacketHeaderSize): a redundant varint. */
  public static final int SIZE_FIELD_BYTES = Varints.REDUNDANT_SIZE;
  /**
   * Fragment size telling the service to drop the packet (upstream kPacketSizeDropPacket): the
   * largest size the field holds.
   */
  public static final int DROP_PACKET_MARKER = Varints.MAX_REDUNDANT;
  /**
   * Largest fragment a writer compacts to a 1-byte size: upstream compacts only sizes strictly below
   * kMaxOneByteMessageLength (127), one less than a nested message may have.
   */
  public static final int MAX_COMPACT_SIZE = Varints.MAX_ONE_BYTE - 1;

  /** {@link #decodeSize} result: the varint runs past the limit. */
  public static final long TRUNCATED = Varints.TRUNCATED;
  /** {@link #decodeSize} result: the varint has more than 4 bytes. */
  public static final long TOO_LONG = Varints.TOO_LONG;

  private PacketFragments() {}

  /** True if a fragment of {@code size} bytes may have its size field compacted to one byte. */
  public static boolean isCompactable(int size) {
    return size >= 0 && size <= MAX_COMPACT_SIZE;
  }

  /**
   * Compacts a finished fragment whose 4 reserved size bytes sit at {@code sizeFieldOffset} and whose
   * {@code size} payload bytes follow them: the payload moves 3 bytes back and the size becomes one
   * byte. Returns the new end of the fragment (where the next one starts).
   */
  public static long compact(MemorySegment segment, long sizeFieldOffset, int size) {
    if (!isCompactable(size)) {
      throw new IllegalArgumentException("fragment too large to compact: " + size);
    }
    MemorySegment.copy(segment, sizeFieldOffset + SIZE_FIELD_BYTES, segment, sizeFieldOffset + 1, size);
    segment.set(ValueLayout.JAVA_BYTE, sizeFieldOffset, (byte) size);
    return sizeFieldOffset + 1 + size;
  }

  /**
   * Decodes a fragment size varint of 1 to 4 bytes starting at {@code offset}, reading no byte at or
   * after {@code limit}. Returns {@link #TRUNCATED} or {@link #TOO_LONG} (both negative) for bad input,
   * otherwise the size and the varint length packed: use {@link #size(long)} and
   * {@link #headerBytes(long)}.
   */
  public static long decodeSize(MemorySegment segment, long offset, long limit) {
    return Varints.readShort(segment, offset, limit, SIZE_FIELD_BYTES);
  }

  /** The size from a non-negative {@link #decodeSize} result. */
  public static int size(long decoded) {
    return Varints.shortValue(decoded);
  }

  /** The varint length (1..4) from a non-negative {@link #decodeSize} result. */
  public static int headerBytes(long decoded) {
    return Varints.shortLength(decoded);
  }
}
