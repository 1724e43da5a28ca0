package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A buffer over 2 GiB: offsets past 2^31 must work (3 GiB of memory: stress runs only). */
@Tag("stress")
@Timeout(120)
class TraceBufferLargeTest {
  @Test
  void writesWrapsAndReadsPastTwoGibibytes() {
    long size = 3L << 30;
    int chunksToFill = (int) (size / 4096) + 1000; // fills the buffer and wraps
    try (Arena arena = Arena.ofConfined(); TraceBuffer tb = TraceBuffer.create(size, OverwritePolicy.RING_BUFFER)) {
      MemorySegment smb = arena.allocate(4096);
      // One packet filling the chunk: size varint then the data; the data starts with the chunk id.
      int len = 4080 - 4;
      smb.set(ValueLayout.JAVA_INT_UNALIGNED, 16, (len & 0x7F | 0x80) | ((len >>> 7 & 0x7F | 0x80) << 8)
          | (0x80 << 16));
      for (int id = 0; id < chunksToFill; id++) {
        smb.set(ValueLayout.JAVA_INT_UNALIGNED, 20, id);
        tb.copyChunkUntrusted(1, 0, 0, 1, id, 1, 0, true, smb, 16, 4080);
      }
      TraceBufferStats s = tb.stats();
      assertEquals(1, s.writeWrapCount());
      assertEquals(1000, s.chunksOverwritten());
      tb.beginRead();
      BufferedPacket p = new BufferedPacket();
      int expected = 1000;
      long maxOffset = 0;
      while (tb.readNextTracePacket(p)) {
        assertEquals(len, p.size());
        assertEquals(expected++, p.segment().get(ValueLayout.JAVA_INT_UNALIGNED, p.sliceOffset(0)));
        maxOffset = Math.max(maxOffset, p.sliceOffset(0));
      }
      assertEquals(chunksToFill, expected);
      assertTrue(maxOffset > (2L << 30), "read at offset " + maxOffset);
    }
  }
}
