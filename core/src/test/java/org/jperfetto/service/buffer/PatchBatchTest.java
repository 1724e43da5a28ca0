package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class PatchBatchTest {
  private static byte[] bytesOf(PatchBatch b, int i) {
    byte[] out = new byte[b.lengthAt(i)];
    MemorySegment.copy(b.sourceAt(i), ValueLayout.JAVA_BYTE, b.sourceOffsetAt(i), out, 0, out.length);
    return out;
  }

  @Test
  void keepsACopyOfEachPatchsBytesNotAReferenceToTheRequest() {
    byte[] request = {9, 1, 2, 3, 4, 5, 6, 7, 8};
    PatchBatch b = new PatchBatch();
    b.add(12, MemorySegment.ofArray(request), 1, 4);
    b.add(40, MemorySegment.ofArray(request), 5, 4);
    request[1] = 99; // the request buffer is reused for the next frame
    assertEquals(2, b.count());
    assertEquals(12, b.offsetAt(0));
    assertEquals(40, b.offsetAt(1));
    assertArrayEquals(new byte[] {1, 2, 3, 4}, bytesOf(b, 0));
    assertArrayEquals(new byte[] {5, 6, 7, 8}, bytesOf(b, 1));
  }

  @Test
  void growsPastItsInitialRoomAndStartsOverAfterClear() {
    PatchBatch b = new PatchBatch();
    MemorySegment src = MemorySegment.ofArray(new byte[200]);
    for (int i = 0; i < 200; i++) {
      src.set(ValueLayout.JAVA_BYTE, i, (byte) i);
    }
    for (int i = 0; i < 20; i++) {
      b.add(i * 4L, src, i * 9L, 9); // 20 patches, 180 bytes: past 8 entries and 64 bytes
    }
    assertEquals(20, b.count());
    for (int i = 0; i < 20; i++) {
      byte[] want = new byte[9];
      for (int k = 0; k < 9; k++) {
        want[k] = (byte) (i * 9 + k);
      }
      assertArrayEquals(want, bytesOf(b, i), "patch " + i);
    }
    b.clear();
    assertEquals(0, b.count());
    b.add(0, src, 100, 4);
    assertArrayEquals(new byte[] {100, 101, 102, 103}, bytesOf(b, 0));
  }
}
