package org.jperfetto.producer.track;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A packet of at most 32 bytes assembled in four longs (little-endian: byte 0 is the low byte of
 * the first), then stored into a chunk with one 8-byte store per long it reaches. For the commonest
 * trace point packets, whose every byte is known once the timestamp is: no sizing pass and no
 * encoder. The last store writes up to 7 bytes past the packet, so the caller claims that much slack
 * after it. One thread uses an instance; nothing allocates.
 */
final class ShortPacket {
  static final int MAX_BYTES = 4 * Long.BYTES;
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private long w0;
  private long w1;
  private long w2;
  private long w3;

  ShortPacket clear() {
    w0 = 0;
    w1 = 0;
    w2 = 0;
    w3 = 0;
    return this;
  }

  /**
   * Puts the low count bytes of value (the bytes above them must be zero) at byte pos; pos + count
   * must not pass {@link #MAX_BYTES}.
   */
  ShortPacket put(long value, int count, int pos) {
    int bit = pos << 3;
    // The bytes that spill into the next long: value >>> (64 - shift), and none when shift is 0,
    // without a branch for that case (a single shift by 64 would be a shift by 0 in Java). Where a
    // field lands depends on the varints before it, and a branch the JIT never saw taken while it
    // profiled (a counter's track uuid at byte 8, after a one-byte delta that only compiled code is
    // fast enough to produce) is left out of the compiled trace point, which is thrown away when a
    // burst takes it.
    long spill = (value >>> 1) >>> (63 - (bit & 63));
    if (pos < 8) {
      w0 |= value << bit;
      w1 |= spill;
    } else if (pos < 16) {
      w1 |= value << (bit - Long.SIZE);
      w2 |= spill;
    } else if (pos < 24) {
      w2 |= value << (bit - 2 * Long.SIZE);
      w3 |= spill;
    } else {
      w3 |= value << (bit - 3 * Long.SIZE);
    }
    return this;
  }

  /** Stores the first length bytes (and up to 7 after them) at offset at of chunk. */
  void store(MemorySegment chunk, long at, int length) {
    chunk.set(LONG_LE, at, w0);
    if (length > Long.BYTES) {
      chunk.set(LONG_LE, at + Long.BYTES, w1);
      if (length > 2 * Long.BYTES) {
        chunk.set(LONG_LE, at + 2 * Long.BYTES, w2);
        if (length > 3 * Long.BYTES) {
          chunk.set(LONG_LE, at + 3 * Long.BYTES, w3);
        }
      }
    }
  }
}
