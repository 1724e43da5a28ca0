package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;

class PacketFragmentsTest {

  @Test
  void constantsMatchUpstream() {
    assertEquals(4, PacketFragments.SIZE_FIELD_BYTES);
    assertEquals(268_435_455, Varints.MAX_REDUNDANT);
    assertEquals((1 << 28) - 1, PacketFragments.DROP_PACKET_MARKER);
    assertEquals(126, PacketFragments.MAX_COMPACT_SIZE);
  }

  @Test
  void redundantVarintIsAlwaysFourBytes() {
    MemorySegment s = MemorySegment.ofArray(new byte[8]);
    Varints.writeRedundant(s, 2, 0);
    assertArrayEquals(new byte[] {0, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0, 0, 0},
        s.toArray(ValueLayout.JAVA_BYTE));
    Varints.writeRedundant(s, 0, 300);
    assertArrayEquals(new byte[] {(byte) 0xAC, (byte) 0x82, (byte) 0x80, 0},
        s.asSlice(0, 4).toArray(ValueLayout.JAVA_BYTE));
    Varints.writeRedundant(s, 0, PacketFragments.DROP_PACKET_MARKER);
    assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F},
        s.asSlice(0, 4).toArray(ValueLayout.JAVA_BYTE));
    assertThrows(IllegalArgumentException.class, () -> Varints.writeRedundant(s, 0, 1 << 28));
    assertThrows(IllegalArgumentException.class, () -> Varints.writeRedundant(s, 0, -1));
  }

  @Test
  void decodesOneToFourByteVarints() {
    for (int v : new int[] {0, 1, 126, 127, 128, 300, 16383, 16384, 2_097_151, 2_097_152, Varints.MAX_REDUNDANT}) {
      MemorySegment s = MemorySegment.ofArray(new byte[4]);
      Varints.writeRedundant(s, 0, v);
      long d = PacketFragments.decodeSize(s, 0, 4);
      assertEquals(v, PacketFragments.size(d));
      assertEquals(4, PacketFragments.headerBytes(d));
    }
    byte[][] minimal = {
        {5}, {(byte) 0x80, 1}, {(byte) 0xFF, (byte) 0xFF, 0x7F}, {(byte) 0x81, (byte) 0x80, (byte) 0x80, 0}};
    int[] values = {5, 128, 2_097_151, 1};
    for (int i = 0; i < minimal.length; i++) {
      long d = PacketFragments.decodeSize(MemorySegment.ofArray(minimal[i]), 0, minimal[i].length);
      assertEquals(values[i], PacketFragments.size(d));
      assertEquals(minimal[i].length, PacketFragments.headerBytes(d));
    }
  }

  @Test
  void rejectsTruncatedAndOverlongVarints() {
    MemorySegment five = MemorySegment.ofArray(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0});
    assertEquals(PacketFragments.TOO_LONG, PacketFragments.decodeSize(five, 0, 5));
    assertEquals(PacketFragments.TRUNCATED, PacketFragments.decodeSize(five, 0, 3));
    assertEquals(PacketFragments.TRUNCATED, PacketFragments.decodeSize(five, 2, 2));
    MemorySegment one = MemorySegment.ofArray(new byte[] {(byte) 0x80});
    assertEquals(PacketFragments.TRUNCATED, PacketFragments.decodeSize(one, 0, 1), "never reads past the limit");
  }

  @Test
  void compactionMovesThePayloadBackThreeBytes() {
    byte[] b = {9, 9, 9, 9, 1, 2, 3, 4, 5, 7};
    MemorySegment s = MemorySegment.ofArray(b);
    assertTrue(PacketFragments.isCompactable(5));
    assertEquals(6, PacketFragments.compact(s, 0, 5));
    assertArrayEquals(new byte[] {5, 1, 2, 3, 4, 5}, java.util.Arrays.copyOf(b, 6));
    long d = PacketFragments.decodeSize(s, 0, 6);
    assertEquals(5, PacketFragments.size(d));
    assertEquals(1, PacketFragments.headerBytes(d));
    assertTrue(PacketFragments.isCompactable(126));
    assertFalse(PacketFragments.isCompactable(127), "upstream compacts sizes below 127 only");
    assertThrows(IllegalArgumentException.class, () -> PacketFragments.compact(s, 0, 127));
  }
}
