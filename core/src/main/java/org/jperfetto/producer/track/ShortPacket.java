package org.jperfetto.producer.track;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A packet of at most 32 bytes assembled in a small array, then stored into a chunk with one 8-byte
 * store per 8 bytes it reaches. For the commonest trace point packets, whose every byte is known
 * once the timestamp is: no sizing pass and no encoder. Each put is a single 8-byte store whatever
 * its byte count, so puts must come in the order of their positions (a put's bytes past its field
 * are overwritten by the fields after it), and nothing needs clearing between packets. The last
 * store into the chunk writes up to 7 bytes past the packet, so the caller claims that much slack
 * after it. One thread uses an instance; nothing allocates.
 */
final class ShortPacket {
  static final int MAX_BYTES = 4 * Long.BYTES;
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG_AT =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN).withInvokeExactBehavior();

  /** The packet, and room for the 8-byte store of a field that ends at {@link #MAX_BYTES}. */
  private final byte[] bytes = new byte[MAX_BYTES + Long.BYTES];

  /**
   * Puts a count-byte field, the low bytes of value, at byte pos; pos must not pass {@link
   * #MAX_BYTES}. The store writes all 8 bytes of value whatever count is: the ones past the field
   * are overwritten by the fields put after it, or land in the slack past the packet, so count only
   * tells the reader (and the caller's arithmetic) where the next field starts. Branch-free: where
   * a field lands depends on the varints before it, and a branch on it that the JIT never saw taken
   * while it profiled would be left out of the compiled trace point.
   */
  ShortPacket put(long value, int count, int pos) {
    LONG_AT.set(bytes, pos, value);
    return this;
  }

  /** Stores the first length bytes (and up to 7 after them) at offset at of chunk. */
  void store(MemorySegment chunk, long at, int length) {
    chunk.set(LONG_LE, at, (long) LONG_AT.get(bytes, 0));
    if (length > Long.BYTES) {
      chunk.set(LONG_LE, at + Long.BYTES, (long) LONG_AT.get(bytes, Long.BYTES));
      if (length > 2 * Long.BYTES) {
        chunk.set(LONG_LE, at + 2 * Long.BYTES, (long) LONG_AT.get(bytes, 2 * Long.BYTES));
        if (length > 3 * Long.BYTES) {
          chunk.set(LONG_LE, at + 3 * Long.BYTES, (long) LONG_AT.get(bytes, 3 * Long.BYTES));
        }
      }
    }
  }
}
