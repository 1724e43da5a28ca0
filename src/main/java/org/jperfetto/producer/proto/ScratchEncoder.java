package org.jperfetto.producer.proto;

/**
 * Encodes one short message (e.g. a whole small TracePacket) into a reusable heap buffer, for a
 * caller that knows its nested sizes up front: fields are appended in order, a nested message is a
 * tag and a length the caller computed ({@link ProtoWire#lengthDelimitedFieldSize} and friends).
 * The result goes into a chunk with one copy ({@code TraceWriter.tryWriteSmallPacket}) or, when it
 * does not fit there, through {@link ProtoWriter#appendRawProtoBytes}; either way nothing is
 * backfilled or moved. Each varint is one 8-byte store. Holds at most {@link #CAPACITY} bytes; one
 * thread uses an encoder; nothing allocates.
 *
 * <p>The message starts at {@link #OFFSET} of {@link #buffer()}: byte 0 is left free for a 1-byte
 * size header, so header and message can go out in a single copy.
 */
public final class ScratchEncoder {
  /** Most bytes a message may take. */
  public static final int CAPACITY = 256;
  /** Where the message starts in {@link #buffer()}. */
  public static final int OFFSET = 1;
  // Room for a full 8-byte store (or a 10-byte varint) at any position below CAPACITY.
  private final byte[] buffer = new byte[OFFSET + CAPACITY + 2 * Long.BYTES];
  private int position = OFFSET;

  /** Empties the buffer. */
  public ScratchEncoder clear() {
    position = OFFSET;
    return this;
  }

  /** The message is [OFFSET, OFFSET + length()) of this array; byte 0 is free (do not keep it). */
  public byte[] buffer() {
    return buffer;
  }

  /** Bytes of the message so far. */
  public int length() {
    return position - OFFSET;
  }

  /** A varint field (int32, int64, uint32, uint64, bool, enum; negative values take 10 bytes). */
  public ScratchEncoder varInt(int field, long value) {
    putVarInt(ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_VARINT) & 0xFFFF_FFFFL);
    putVarInt(value);
    return this;
  }

  /** A fixed64, sfixed64 or double (as its raw bits) field. */
  public ScratchEncoder fixed64(int field, long value) {
    putVarInt(ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_FIXED64) & 0xFFFF_FFFFL);
    int p = checkRoom(Long.BYTES);
    ProtoWire.BYTES_AS_LONG_LE.set(buffer, p, value);
    position = p + Long.BYTES;
    return this;
  }

  /**
   * Opens a nested message whose body (appended next) takes exactly size bytes: writes its tag and
   * length. Nothing checks the body afterwards: the caller's size must be right.
   */
  public ScratchEncoder nested(int field, int size) {
    putVarInt(ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED) & 0xFFFF_FFFFL);
    putVarInt(size & 0xFFFF_FFFFL);
    return this;
  }

  private void putVarInt(long value) {
    int p = checkRoom(ProtoWire.MAX_VARINT_SIZE);
    if ((value >>> 56) == 0) {
      long encoded = ScatteredStreamWriter.encodeVarInt(value);
      ProtoWire.BYTES_AS_LONG_LE.set(buffer, p, encoded);
      position = p + ScatteredStreamWriter.encodedSize(encoded);
      return;
    }
    while ((value & ~0x7FL) != 0) {
      buffer[p++] = (byte) (value | 0x80);
      value >>>= 7;
    }
    buffer[p++] = (byte) value;
    position = p;
  }

  private int checkRoom(int bytes) {
    int p = position;
    if (p + bytes > OFFSET + CAPACITY) {
      throw new IllegalStateException("message too long for the scratch encoder: position=" + p
          + " adding=" + bytes + " capacity=" + CAPACITY);
    }
    return p;
  }
}
