package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.abi.Varints;

/**
 * Protobuf wire-format constants and helpers shared by the streaming writer: tags, zigzag, varint
 * sizes and the 4-byte redundant varint used for sizes that are known only after the fact.
 */
public final class ProtoWire {
  private ProtoWire() {}

  static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  /** The same 8-byte little-endian view over a byte[] (scratch encodings copied into a segment). */
  static final VarHandle BYTES_AS_LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  public static final int WIRE_TYPE_VARINT = 0;
  public static final int WIRE_TYPE_FIXED64 = 1;
  public static final int WIRE_TYPE_LENGTH_DELIMITED = 2;
  public static final int WIRE_TYPE_FIXED32 = 5;

  /** Largest field number protobuf allows (2^29 - 1). */
  public static final int MAX_FIELD_NUMBER = (1 << 29) - 1;

  /** Bytes reserved for a size that is backfilled later (protozero's kMessageLengthFieldSize). */
  public static final int MESSAGE_LENGTH_FIELD_SIZE = 4;

  /** Largest size a 4-byte redundant varint can hold: 2^28 - 1; also the SMB's drop-packet marker. */
  public static final int MAX_MESSAGE_LENGTH = (1 << (7 * MESSAGE_LENGTH_FIELD_SIZE)) - 1;

  /** Largest size that fits a 1-byte varint. */
  public static final int MAX_ONE_BYTE_MESSAGE_LENGTH = 127;

  /**
   * Largest packet fragment size a TraceWriter writes as 1 byte: upstream compacts a fragment only
   * when its size is below 127 (strictly), one less than for nested messages.
   */
  public static final int MAX_ONE_BYTE_FRAGMENT_SIZE = 126;

  /** Bytes saved when a 4-byte size field is compacted to 1 byte. */
  public static final int BYTES_TO_COMPACT = MESSAGE_LENGTH_FIELD_SIZE - 1;

  /** Longest encoding of a varint (a 64-bit value). */
  public static final int MAX_VARINT_SIZE = 10;

  /** Encodes a tag; the field number must be in [1, 2^29 - 1]. */
  public static int makeTag(int fieldNumber, int wireType) {
    if (fieldNumber <= 0 || fieldNumber > MAX_FIELD_NUMBER) {
      throw badFieldNumber(fieldNumber);
    }
    return (fieldNumber << 3) | wireType;
  }

  private static IllegalArgumentException badFieldNumber(int fieldNumber) {
    return new IllegalArgumentException("field number out of range: field=" + fieldNumber);
  }

  public static long zigZagEncode(long value) {
    return (value << 1) ^ (value >> 63);
  }

  public static int zigZagEncode(int value) {
    return (value << 1) ^ (value >> 31);
  }

  /** Number of bytes of the varint encoding of value (taken as unsigned 64-bit). */
  public static int varIntSize(long value) {
    return Varints.size(value);
  }

  /** Bytes of the tag of field (any wire type: the type takes the low 3 bits). */
  public static int tagSize(int fieldNumber) {
    return varIntSize(makeTag(fieldNumber, WIRE_TYPE_VARINT));
  }

  /** Bytes of a varint field (tag and value), as {@link ProtoWriter#appendVarInt} writes it. */
  public static int varIntFieldSize(int fieldNumber, long value) {
    return tagSize(fieldNumber) + varIntSize(value);
  }

  /** Bytes of a fixed64 or double field. */
  public static int fixed64FieldSize(int fieldNumber) {
    return tagSize(fieldNumber) + Long.BYTES;
  }

  /** Bytes of a length-delimited field (tag, length, body) whose body takes size bytes. */
  public static int lengthDelimitedFieldSize(int fieldNumber, int size) {
    return tagSize(fieldNumber) + varIntSize(size) + size;
  }

  /**
   * Writes value as a varint of exactly 4 bytes (leading-zero redundant encoding, e.g. 1 becomes
   * 81 80 80 00), so a size reserved before the payload can be filled in afterwards.
   */
  public static void writeRedundantVarInt(MemorySegment segment, long offset, int value) {
    if (value < 0 || value > MAX_MESSAGE_LENGTH) {
      throw new IllegalArgumentException("size does not fit a 4-byte varint: size=" + value);
    }
    segment.set(INT_LE, offset, redundantVarInt(value));
  }

  /** The 4 bytes of the redundant varint of value, packed little-endian into an int (byte 0 lowest). */
  public static int redundantVarInt(int value) {
    return PacketFragments.redundantSize(value);
  }
}
