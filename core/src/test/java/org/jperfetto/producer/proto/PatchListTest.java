package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;

class PatchListTest {

  @Test
  void entriesAreUnpatchedUntilFilledAndLeaveInOrder() {
    PatchList list = new PatchList(2);
    assertTrue(list.isEmpty());
    assertFalse(list.frontIsPatched());
    long a = list.annotate(5, 100);
    long b = list.annotate(6, 0);
    assertFalse(list.frontIsPatched());
    list.fill(b, 0);
    assertFalse(list.frontIsPatched(), "only the front decides");
    list.fill(a, 300);
    assertTrue(list.frontIsPatched());
    assertEquals(5, list.frontChunkId());
    assertEquals(100, list.frontOffset());
    byte[] bytes = new byte[4];
    list.frontSizeField(bytes, 0);
    assertEquals("ac828000", java.util.HexFormat.of().formatHex(bytes), "300 as a 4-byte varint");
    list.popFront();
    assertTrue(list.frontIsPatched(), "a zero size is still patched: 80 80 80 00");
    assertEquals(0x00808080, list.frontSizeField());
    list.popFront();
    assertTrue(list.isEmpty());
    assertThrows(IllegalStateException.class, list::popFront);
    assertThrows(IllegalStateException.class, () -> list.fill(a, 1));
  }

  @Test
  void sequenceNumbersSurviveGrowthAndWrapping() {
    PatchList list = new PatchList(2);
    long[] seqs = new long[50];
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < seqs.length; i++) {
        seqs[i] = list.annotate(i, i * 3);
      }
      for (int i = seqs.length - 1; i >= 0; i--) {
        list.fill(seqs[i], i + 1);
      }
      for (int i = 0; i < seqs.length; i++) {
        assertEquals(i, list.frontChunkId());
        assertEquals(i * 3, list.frontOffset());
        assertEquals(Varints.redundant(i + 1), list.frontSizeField());
        list.popFront();
      }
    }
    assertEquals(0, list.size());
  }

  @Test
  void badOffsetsAndSizesAreRejected() {
    PatchList list = new PatchList();
    assertThrows(IllegalArgumentException.class, () -> list.annotate(1, PatchList.MAX_OFFSET + 1));
    assertThrows(IllegalArgumentException.class, () -> list.annotate(1, -1));
    long s = list.annotate(1, PatchList.MAX_OFFSET);
    assertThrows(IllegalArgumentException.class, () -> list.fill(s, Varints.MAX_REDUNDANT + 1));
    assertThrows(IllegalStateException.class, () -> list.fill(s + 1, 1));
  }
}
