package org.jperfetto.wire;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Protobuf wire-format arithmetic for hand-written encoders and decoders: wire types, tags (field
 * number and wire type), zigzag, and the sizes of whole fields. Varints themselves are
 * {@link Varints}; reading is {@link ProtoCursor}. Field numbers come from the generated
 * {@code *_FIELD_NUMBER} constants of {@code org.jperfetto.protos}, never written by hand.
 */
public final class ProtoWire {
  private ProtoWire() {}

  /** fixed32 and fixed64 values are little-endian on the wire. */
  public static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  public static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  public static final int WIRE_TYPE_VARINT = 0;
  public static final int WIRE_TYPE_FIXED64 = 1;
  public static final int WIRE_TYPE_LENGTH_DELIMITED = 2;
  public static final int WIRE_TYPE_FIXED32 = 5;

  /** Bits of a tag below the field number: the wire type. */
  private static final int TYPE_BITS = 3;
  private static final int TYPE_MASK = (1 << TYPE_BITS) - 1;

  /** Largest field number protobuf allows (2^29 - 1). */
  public static final int MAX_FIELD_NUMBER = (1 << 29) - 1;

  /** Encodes a tag; the field number must be in [1, 2^29 - 1]. */
  public static int makeTag(int fieldNumber, int wireType) {
    if (fieldNumber <= 0 || fieldNumber > MAX_FIELD_NUMBER) {
      throw badFieldNumber(fieldNumber);
    }
    return (fieldNumber << TYPE_BITS) | wireType;
  }

  /** The tag of a varint field (wire type 0). */
  public static int varIntTag(int fieldNumber) {
    return makeTag(fieldNumber, WIRE_TYPE_VARINT);
  }

  /** The field number of a tag. */
  public static int fieldNumber(int tag) {
    return tag >>> TYPE_BITS;
  }

  /** The wire type of a tag. */
  public static int wireType(int tag) {
    return tag & TYPE_MASK;
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

  /** Bytes of the tag of field (any wire type: the type takes the low 3 bits). */
  public static int tagSize(int fieldNumber) {
    return Varints.size(varIntTag(fieldNumber));
  }

  /** Bytes of a varint field (tag and value). */
  public static int varIntFieldSize(int fieldNumber, long value) {
    return tagSize(fieldNumber) + Varints.size(value);
  }

  /** Bytes of a fixed64 or double field. */
  public static int fixed64FieldSize(int fieldNumber) {
    return tagSize(fieldNumber) + Long.BYTES;
  }

  /** Bytes of a length-delimited field (tag, length, body) whose body takes size bytes. */
  public static int lengthDelimitedFieldSize(int fieldNumber, int size) {
    return tagSize(fieldNumber) + Varints.size(size) + size;
  }

  /** Bytes of a varint field whose tag ({@link #makeTag}) is given. */
  public static int taggedVarIntSize(int tag, long value) {
    return Varints.size(tag) + Varints.size(value);
  }

  /** Bytes of a length-delimited field whose tag ({@link #makeTag}) is given and whose body takes size bytes. */
  public static int taggedLengthDelimitedSize(int tag, int size) {
    return Varints.size(tag) + Varints.size(size) + size;
  }
}
