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

  private static final ValueLayout.OfInt INT_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  /** Bytes the varint of v (taken as unsigned 64-bit) takes, 1 to 10. */
  public static int size(long v) {
    // 1 byte per started group of 7 significant bits (0 still takes one byte): ceil(bits / 7) for
    // bits = 64 - nlz, as a multiply and a shift, which is exact for every nlz from 0 to 63.
    return (640 - 9 * Long.numberOfLeadingZeros(v | 1)) >>> 6;
  }

  /** Writes v's varint at out[at..] and returns the index after it. */
  public static int put(byte[] out, int at, long v) {
    while ((v & ~0x7fL) != 0) {
      out[at++] = (byte) (v & 0x7f | 0x80);
      v >>>= 7;
    }
    out[at++] = (byte) v;
    return at;
  }

  /** Writes v's varint at offset of segment and returns the offset after it. */
  public static long put(MemorySegment segment, long offset, long v) {
    while ((v & ~0x7fL) != 0) {
      segment.set(ValueLayout.JAVA_BYTE, offset++, (byte) (v & 0x7f | 0x80));
      v >>>= 7;
    }
    segment.set(ValueLayout.JAVA_BYTE, offset++, (byte) v);
    return offset;
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
