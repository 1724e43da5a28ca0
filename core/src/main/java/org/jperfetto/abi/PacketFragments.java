package org.jperfetto.abi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The size prefix of each fragment in a chunk: a varint of the fragment's payload size.
 *
 * <p>Writers reserve {@link #SIZE_FIELD_BYTES} bytes before they know the size and fill them with a
 * redundant 4-byte varint (continuation bit set on the first three bytes). Since v58 upstream writers
 * compact a fragment shorter than {@link #MAX_ONE_BYTE_SIZE} that fits in its chunk to a 1-byte size,
 * moving its payload 3 bytes back, so readers accept any varint of 1 to 4 bytes. The size
 * {@link #DROP_PACKET_MARKER} marks a packet the writer abandoned (the SMB was full).
 */
public final class PacketFragments {
  /** Bytes a writer reserves for a fragment's size (upstream kPacketHeaderSize). */
  public static final int SIZE_FIELD_BYTES = 4;
  /** Largest size a 4-byte varint holds (upstream kMaxMessageLength). */
  public static final int MAX_SIZE = (1 << (SIZE_FIELD_BYTES * 7)) - 1;
  /** Fragment size telling the service to drop the packet (upstream kPacketSizeDropPacket). */
  public static final int DROP_PACKET_MARKER = MAX_SIZE;
  /** Sizes strictly below this are compacted to one byte (upstream kMaxOneByteMessageLength). */
  public static final int MAX_ONE_BYTE_SIZE = (1 << 7) - 1;

  /** {@link #decodeSize} result: the varint runs past the limit. */
  public static final long TRUNCATED = -1;
  /** {@link #decodeSize} result: the varint has more than 4 bytes. */
  public static final long TOO_LONG = -2;

  private static final ValueLayout.OfInt INT_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  private PacketFragments() {}

  /** Writes {@code size} as a redundant 4-byte varint at {@code offset}. */
  public static void writeRedundantSize(MemorySegment segment, long offset, int size) {
    if (size < 0 || size > MAX_SIZE) {
      throw new IllegalArgumentException("fragment size out of range: " + size);
    }
    segment.set(INT_LE, offset, redundantSize(size));
  }

  /**
   * The 4 bytes of the redundant varint of {@code size} (0..{@link #MAX_SIZE}), packed
   * little-endian into an int, byte 0 lowest: continuation bit set on bytes 0-2, e.g. 1 becomes
   * 81 80 80 00. One store writes the whole size field.
   */
  public static int redundantSize(int size) {
    return (0x80 | (size & 0x7F))
        | (0x80 | ((size >>> 7) & 0x7F)) << 8
        | (0x80 | ((size >>> 14) & 0x7F)) << 16
        | ((size >>> 21) & 0x7F) << 24;
  }

  /** True if a fragment of {@code size} bytes may have its size field compacted to one byte. */
  public static boolean isCompactable(int size) {
    return size >= 0 && size < MAX_ONE_BYTE_SIZE;
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
    long value = 0;
    for (int i = 0; i < SIZE_FIELD_BYTES; i++) {
      if (offset + i >= limit) {
        return TRUNCATED;
      }
      int b = segment.get(ValueLayout.JAVA_BYTE, offset + i);
      value |= (long) (b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        return ((long) (i + 1) << 32) | value;
      }
    }
    return TOO_LONG;
  }

  /** The size from a non-negative {@link #decodeSize} result. */
  public static int size(long decoded) {
    return (int) decoded;
  }

  /** The varint length (1..4) from a non-negative {@link #decodeSize} result. */
  public static int headerBytes(long decoded) {
    return (int) (decoded >>> 32);
  }
}
