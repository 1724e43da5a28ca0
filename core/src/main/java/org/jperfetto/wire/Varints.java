package org.jperfetto.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Protobuf base-128 varints: the one place that says how many bytes a varint takes and how its
 * bytes are laid out. Every hand-written encoder asks here: the producer's packet writer, CommitData,
 * the IPC layer's frames, the service's trusted packet fields and ReadBuffers replies.
 *
 * <p>A value is taken as unsigned 64-bit; an int is widened to long first, so a negative int32
 * takes ten bytes, as protobuf encodes it (pass {@code Integer.toUnsignedLong(v)} for a uint32).
 *
 * <p>The redundant form: a size that is known only after the bytes it counts were written gets
 * {@link #REDUNDANT_SIZE} bytes reserved and is filled in afterwards as a varint of exactly that
 * many bytes, padded with continuation bits (1 becomes {@code 81 80 80 00}). Protobuf parsers accept
 * such non-minimal varints; protozero uses the form for nested message lengths and the SMB for
 * packet fragment sizes.
 */
public final class Varints {
  private Varints() {}

  /** Longest encoding of a varint (a 64-bit value). */
  public static final int MAX_SIZE = 10;

  /** Largest value a one-byte varint holds. */
  public static final int MAX_ONE_BYTE = (1 << 7) - 1;

  /** Bytes of a redundant varint (protozero's kMessageLengthFieldSize). */
  public static final int REDUNDANT_SIZE = 4;

  /** Largest value a redundant varint holds: 2^28 - 1 (protozero's kMaxMessageLength). */
  public static final int MAX_REDUNDANT = (1 << (7 * REDUNDANT_SIZE)) - 1;

  /** A varint's continuation bit in each of eight bytes. */
  private static final long CONTINUE_ALL = 0x8080_8080_8080_8080L;

  private static final ValueLayout.OfInt INT_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  /** Bytes the varint of v (taken as unsigned 64-bit) takes, 1 to 10. */
  public static int size(long v) {
    // 1 byte per started group of 7 significant bits (0 still takes one byte): ceil(bits / 7) for
    // bits = 64 - nlz, as a multiply and a shift, which is exact for every nlz from 0 to 63.
    return (640 - 9 * Long.numberOfLeadingZeros(v | 1)) >>> 6;
  }

  /** True if v's varint takes one byte (v taken as unsigned 64-bit: a negative int does not). */
  public static boolean isOneByte(long v) {
    return (v & ~0x7fL) == 0;
  }

  /** Writes v's varint at out[at..] and returns the index after it. */
  public static int put(byte[] out, int at, long v) {
    while (!isOneByte(v)) {
      out[at++] = (byte) (v & 0x7f | 0x80);
      v >>>= 7;
    }
    out[at++] = (byte) v;
    return at;
  }

  /** Writes v's varint at offset of segment and returns the offset after it. */
  public static long put(MemorySegment segment, long offset, long v) {
    while (!isOneByte(v)) {
      segment.set(ValueLayout.JAVA_BYTE, offset++, (byte) (v & 0x7f | 0x80));
      v >>>= 7;
    }
    segment.set(ValueLayout.JAVA_BYTE, offset++, (byte) v);
    return offset;
  }

  /**
   * The varint of value (below 2^56: 1 to 8 bytes) as a little-endian long, first byte in the low
   * bits and zeros above the last, so one 8-byte store writes it; {@link #size} gives its length.
   * For encoders that write a varint, or assemble a whole short message, in registers.
   */
  public static long packed(long value) {
    if ((value >>> 56) != 0) {
      throw new IllegalArgumentException("packed takes values below 2^56: " + value);
    }
    return packedShort(value);
  }

  /**
   * The first eight bytes of value's varint as a little-endian long: all of it, as {@link #packed},
   * when it takes eight bytes or fewer; {@link #packedHigh} has the rest.
   */
  public static long packedLow(long value) {
    return (value >>> 56) == 0 ? packedShort(value) : spread(value) | CONTINUE_ALL;
  }

  /** The ninth and tenth bytes of value's varint as a little-endian long: 0 when it takes eight or fewer. */
  public static long packedHigh(long value) {
    long rest = value >>> 56;
    return isOneByte(rest) ? rest : (rest & 0x7F) | 0x80 | ((rest >>> 7) << 8);
  }

  /**
   * {@link #packed} without the range check: value must be below 2^56. A group at a time: on a
   * trace's values (most take one byte) this beats a branch-free spread of all eight groups
   * (VarintsBench).
   */
  private static long packedShort(long value) {
    long encoded = 0;
    int shift = 0;
    while (!isOneByte(value)) {
      encoded |= ((value & 0x7F) | 0x80) << shift;
      value >>>= 7;
      shift += 8;
    }
    return encoded | (value << shift);
  }

  /**
   * The low 56 bits of value as eight varint groups of 7 bits, one per byte, continuation bits clear
   * (package-private for VarintsBench, which compares an encoding built on it).
   */
  static long spread(long value) {
    return (value & 0x7FL)
        | ((value << 1) & 0x7F00L)
        | ((value << 2) & 0x7F_0000L)
        | ((value << 3) & 0x7F00_0000L)
        | ((value << 4) & 0x7F_0000_0000L)
        | ((value << 5) & 0x7F00_0000_0000L)
        | ((value << 6) & 0x7F_0000_0000_0000L)
        | ((value << 7) & 0x7F00_0000_0000_0000L);
  }

  /**
   * The {@link #REDUNDANT_SIZE} bytes of the redundant varint of value (0..{@link #MAX_REDUNDANT}),
   * packed little-endian into an int, byte 0 lowest, so one store writes the whole field.
   */
  public static int redundant(int value) {
    return (0x80 | (value & 0x7F))
        | (0x80 | ((value >>> 7) & 0x7F)) << 8
        | (0x80 | ((value >>> 14) & 0x7F)) << 16
        | ((value >>> 21) & 0x7F) << 24;
  }

  /**
   * Writes value as a redundant varint at offset of segment.
   *
   * @throws IllegalArgumentException if value is outside 0..{@link #MAX_REDUNDANT}
   */
  public static void writeRedundant(MemorySegment segment, long offset, int value) {
    if (value < 0 || value > MAX_REDUNDANT) {
      throw new IllegalArgumentException("size does not fit a " + REDUNDANT_SIZE + "-byte varint: size=" + value);
    }
    segment.set(INT_LE, offset, redundant(value));
  }

  /** {@link #readShort} result: the varint runs past the limit. */
  public static final long TRUNCATED = -1;
  /** {@link #readShort} result: the varint is longer than allowed. */
  public static final long TOO_LONG = -2;

  /**
   * Reads a varint of at most maxBytes bytes (1 to 4, so the value fits 28 bits) at offset of
   * segment, reading no byte at or after limit: for untrusted short sizes such as the SMB's fragment
   * headers. Returns {@link #TRUNCATED} or {@link #TOO_LONG} (both negative) for bad input, otherwise
   * the value and the varint's length packed: take them apart with {@link #shortValue} and
   * {@link #shortLength}. Allocates nothing.
   */
  public static long readShort(MemorySegment segment, long offset, long limit, int maxBytes) {
    long value = 0;
    for (int i = 0; i < maxBytes; i++) {
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

  /** The value from a non-negative {@link #readShort} result. */
  public static int shortValue(long read) {
    return (int) read;
  }

  /** The varint's length in bytes from a non-negative {@link #readShort} result. */
  public static int shortLength(long read) {
    return (int) (read >>> 32);
  }
}
