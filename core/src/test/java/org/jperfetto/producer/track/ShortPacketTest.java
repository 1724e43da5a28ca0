package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** ShortPacket against a byte array model: every position, every byte count, spills included. */
class ShortPacketTest {
  @Test
  void putsLandAtTheirBytesAndStoreWritesWholeLongs() {
    Random random = new Random(13);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment chunk = arena.allocate(64);
      for (int pos = 0; pos < ShortPacket.MAX_BYTES; pos++) {
        for (int count = 1; count <= Long.BYTES && pos + count <= ShortPacket.MAX_BYTES; count++) {
          // A field before this one and one after it, so neighbours must survive the put's spill.
          byte[] model = new byte[ShortPacket.MAX_BYTES];
          ShortPacket packet = new ShortPacket();
          if (pos > 0) {
            put(packet, model, random, Math.min(pos, Long.BYTES), pos - Math.min(pos, Long.BYTES));
          }
          put(packet, model, random, count, pos);
          int end = pos + count;
          if (end < ShortPacket.MAX_BYTES) {
            put(packet, model, random, Math.min(ShortPacket.MAX_BYTES - end, Long.BYTES), end);
          }
          int length = Math.max(Long.BYTES + 1, Math.min(ShortPacket.MAX_BYTES, end + 1)); // 9 at the least
          chunk.fill((byte) 0x5A);
          packet.store(chunk, 3, length);
          int stored = (length + 7) / 8 * 8;
          byte[] expected = new byte[stored];
          System.arraycopy(model, 0, expected, 0, stored);
          assertArrayEquals(expected, chunk.asSlice(3, stored).toArray(ValueLayout.JAVA_BYTE),
              "pos " + pos + " count " + count);
          assertArrayEquals(new byte[] {0x5A, 0x5A, 0x5A}, chunk.asSlice(0, 3).toArray(ValueLayout.JAVA_BYTE));
          assertArrayEquals(new byte[] {0x5A}, chunk.asSlice(3 + stored, 1).toArray(ValueLayout.JAVA_BYTE),
              "nothing past the longs the packet reaches");
        }
      }
    }
  }

  /** Puts count random non-zero bytes at pos in both the packet and the model. */
  private static void put(ShortPacket packet, byte[] model, Random random, int count, int pos) {
    long value = 0;
    for (int i = 0; i < count; i++) {
      int b = 1 + random.nextInt(255);
      model[pos + i] = (byte) b;
      value |= (long) b << (8 * i);
    }
    packet.put(value, count, pos);
  }
}
