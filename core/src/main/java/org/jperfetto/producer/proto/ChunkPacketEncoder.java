package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Encodes one short message whose size the caller knows up front (a whole small TracePacket, size
 * header first) into chunk memory: bytes gather in a long, full longs in a small array, and {@link
 * #finish()} stores them into the chunk eight bytes at a time. No byte-wise stores and no byte
 * copy; the few segment stores sit in one loop, which keeps the encoder small enough for the JIT to
 * inline at every field of a trace point. Fields are appended in order; a nested message is a tag
 * and a length the caller computed ({@link ProtoWire#lengthDelimitedFieldSize} and friends).
 *
 * <p>The last store writes a whole long, so up to {@link #SLACK} bytes past the message's end are
 * overwritten (with zeros): the caller claims that much free room beyond the message. A message
 * holds at most {@link #CAPACITY} bytes. One thread uses an encoder; nothing allocates.
 */
public final class ChunkPacketEncoder {
  /** Bytes past the message's end that {@link #finish()} may overwrite. */
  public static final int SLACK = Long.BYTES;
  /** Most bytes a message may take. */
  public static final int CAPACITY = 256;

  private MemorySegment segment = MemorySegment.NULL;
  private long start;
  /** The message's full longs so far, in order. */
  private final long[] words = new long[CAPACITY / Long.BYTES];
  private int wordCount;
  /** Bytes not yet stored, the first in the low byte. */
  private long pending;
  /** Bits of pending in use: 0 to 56, a multiple of 8. */
  private int bits;

  /** Starts a message at offset of segment (the caller made sure it and the slack fit). */
  public ChunkPacketEncoder begin(MemorySegment target, long offset) {
    segment = target;
    start = offset;
    wordCount = 0;
    pending = 0;
    bits = 0;
    return this;
  }

  /** One raw byte (e.g. a fragment's 1-byte size header). */
  public ChunkPacketEncoder rawByte(int value) {
    append(value & 0xFFL, 1);
    return this;
  }

  /** A varint field (int32, int64, uint32, uint64, bool, enum; negative values take 10 bytes). */
  public ChunkPacketEncoder varInt(int field, long value) {
    int tag = ProtoWire.varIntTag(field);
    if (Varints.isOneByte(tag) && Varints.isOneByte(value)) {
      append(tag | (value << 8), 2); // the common field: a 1-byte tag and a 1-byte value
    } else {
      putVarInt(tag & 0xFFFF_FFFFL);
      putVarInt(value);
    }
    return this;
  }

  /** A fixed64, sfixed64 or double (as its raw bits) field. */
  public ChunkPacketEncoder fixed64(int field, long value) {
    putVarInt(ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_FIXED64) & 0xFFFF_FFFFL);
    append(value & 0xFFFF_FFFFL, 4);
    append(value >>> 32, 4);
    return this;
  }

  /** Opens a nested message whose body (appended next) takes exactly size bytes. */
  public ChunkPacketEncoder nested(int field, int size) {
    putVarInt(ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED) & 0xFFFF_FFFFL);
    putVarInt(size & 0xFFFF_FFFFL);
    return this;
  }

  /**
   * Stores the message into the segment; returns its length in bytes.
   *
   * @throws IllegalStateException if the message went past {@link #CAPACITY}
   */
  public int finish() {
    int n = wordCount;
    if ((n << 3) + (bits >>> 3) > CAPACITY) {
      throw new IllegalStateException("message too long for the encoder: over " + CAPACITY + " bytes");
    }
    MemorySegment s = segment;
    long p = start;
    for (int i = 0; i < n; i++) {
      s.set(ProtoWire.LONG_LE, p, words[i]);
      p += Long.BYTES;
    }
    if (bits != 0) {
      s.set(ProtoWire.LONG_LE, p, pending);
    }
    segment = MemorySegment.NULL;
    return (n << 3) + (bits >>> 3);
  }

  private void putVarInt(long value) {
    if (Varints.isOneByte(value)) {
      append(value, 1);
    } else {
      putLongerVarInt(value);
    }
  }

  private void putLongerVarInt(long value) {
    if ((value >>> 56) == 0) {
      append(Varints.packedLow(value), Varints.size(value)); // 2 to 8 bytes
    } else { // 9 or 10 bytes (e.g. a uuid, a negative int): the first eight, then the rest
      append(Varints.packedLow(value), Long.BYTES);
      append(Varints.packedHigh(value), Varints.size(value) - Long.BYTES);
    }
  }

  // The packed varints of the short-slice packets that producer.track assembles, under the names
  // ThreadState calls them by (Varints has them; these go once ThreadState, being split, calls it).

  /** {@link Varints#packed}. */
  public static long varIntBits(long value) {
    return Varints.packed(value);
  }

  /** {@link Varints#packedLow}. */
  public static long varIntLowBits(long value) {
    return Varints.packedLow(value);
  }

  /** {@link Varints#packedHigh}. */
  public static long varIntHighBits(long value) {
    return Varints.packedHigh(value);
  }

  /** Appends the low count bytes of encoded (1 to 8; the bytes above them are zero). */
  private void append(long encoded, int count) {
    int used = bits;
    long merged = pending | (encoded << used);
    int total = used + (count << 3);
    if (total < Long.SIZE) {
      pending = merged;
      bits = total;
      return;
    }
    int n = wordCount;
    if (n < words.length) {
      words[n] = merged;
    }
    wordCount = n + 1; // past the array: finish() refuses the message
    // What did not fit in the full long: none when it was empty (the only way to add 8 bytes).
    pending = used == 0 ? 0 : encoded >>> (Long.SIZE - used);
    bits = total - Long.SIZE;
  }
}
