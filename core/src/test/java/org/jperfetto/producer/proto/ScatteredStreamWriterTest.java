package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.CodedOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;

class ScatteredStreamWriterTest {

  @Test
  void writtenCountsBytesOverRangesButNotSkippedTails() {
    RangeCollector c = new RangeCollector(6);
    ScatteredStreamWriter s = c.stream;
    s.writeBytes(new byte[4], 0, 4);
    s.reserveBytes(4); // 2 left in the first range: skipped
    assertEquals(8, s.written());
    assertEquals(2, c.ranges.size());
    s.writeBytes(new byte[9], 0, 9);
    assertEquals(17, s.written());
    assertEquals(17, c.bytes().length);
  }

  @Test
  void rewindMovesTheLastBytesBack() {
    RangeCollector c = new RangeCollector(16);
    ScatteredStreamWriter s = c.stream;
    s.writeBytes(new byte[] {1, 2, 3, 4, 5, 6}, 0, 6);
    s.rewind(2, 3);
    assertEquals("010506", HexFormat.of().formatHex(c.bytes()));
    assertThrows(IllegalStateException.class, () -> s.rewind(2, 2));
  }

  @Test
  void redundantVarIntsAreFourBytes() {
    MemorySegment m = MemorySegment.ofArray(new byte[4]);
    Varints.writeRedundant(m, 0, 1);
    assertEquals("81808000", HexFormat.of().formatHex(m.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
    Varints.writeRedundant(m, 0, Varints.MAX_REDUNDANT);
    assertEquals("ffffff7f", HexFormat.of().formatHex(m.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
    assertThrows(IllegalArgumentException.class, () -> Varints.writeRedundant(m, 0, 1 << 28));
    assertEquals(1, Varints.size(0));
    assertEquals(2, Varints.size(128));
    assertEquals(10, Varints.size(-1));
  }

  @Test
  void varIntSizesAreProtobufJavasAtEveryBitLength() {
    for (int bit = 0; bit < Long.SIZE; bit++) {
      long p = 1L << bit;
      for (long v : new long[] {p - 1, p, p + 1, p | (p - 1)}) {
        assertEquals(CodedOutputStream.computeUInt64SizeNoTag(v), Varints.size(v),
            Long.toUnsignedString(v));
      }
    }
  }

  @Test
  void badRangesAndEmptyDelegatesFailClearly() {
    ScatteredStreamWriter lazy = new ScatteredStreamWriter(w -> {});
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> lazy.writeByte(1));
    assertEquals("delegate gave no writable range: begin=0 end=0", e.getMessage());
    MemorySegment m = MemorySegment.ofArray(new byte[8]);
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> lazy.reset(m, 4, 9));
    assertEquals("range out of segment: begin=4 end=9 size=8", bad.getMessage());
    ScatteredStreamWriter tiny = new ScatteredStreamWriter(w -> w.reset(m, 0, 2));
    assertThrows(IllegalStateException.class, () -> tiny.reserveBytes(4));
  }

  @Test
  void closedClaimsDeclineUntilTheNextRangeWhileWritesGoOn() {
    MemorySegment m = MemorySegment.ofArray(new byte[64]);
    ScatteredStreamWriter s = new ScatteredStreamWriter(w -> w.reset(m, 32, 64));
    s.reset(m, 0, 32);
    assertEquals(0, s.tryClaim(4, 8));
    s.closeClaims();
    assertEquals(-1, s.tryClaim(1, 0));
    assertEquals(28, s.bytesAvailable()); // the claim took nothing
    s.writeBytes(new byte[4], 0, 4); // ordinary writes are not affected
    assertEquals(24, s.bytesAvailable());
    s.reset(m, 32, 64);
    assertEquals(32, s.tryClaim(4, 8));
  }
}
