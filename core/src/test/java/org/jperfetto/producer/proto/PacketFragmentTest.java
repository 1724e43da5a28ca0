package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class PacketFragmentTest {

  private static String hex(byte[] b, int from, int length) {
    return HexFormat.of().formatHex(b, from, from + length);
  }

  @Test
  void fragmentsBelow127BytesGetOneByteAndLongerOnesFour() {
    RangeCollector c = new RangeCollector(4096);
    PacketFragment f = new PacketFragment(c.stream);
    f.begin();
    assertTrue(f.isOpen());
    c.writer.appendBytes(1, new byte[124]); // 126 bytes: compacted
    assertEquals(126, f.end());
    assertFalse(f.isOpen());
    f.begin();
    c.writer.appendBytes(1, new byte[125]); // 127 bytes: nested messages would compact, fragments do not
    assertEquals(127, f.end());
    byte[] b = c.bytes();
    assertEquals("7e0a7c", hex(b, 0, 3));
    assertEquals("ff8080000a7d", hex(b, 127, 6));
    assertEquals(127 + 4 + 127, b.length);
  }

  @Test
  void chunkBoundariesAndDropsKeepFourBytes() {
    RangeCollector c = new RangeCollector(4096);
    PacketFragment f = new PacketFragment(c.stream);
    f.begin();
    c.writer.appendVarInt(1, 1);
    assertEquals(2, f.endAtChunkBoundary());
    f.begin();
    c.writer.appendVarInt(1, 1);
    f.endAsDropped();
    assertEquals("82808000" + "0801" + "ffffff7f" + "0801", HexFormat.of().formatHex(c.bytes()));
    IllegalStateException e = assertThrows(IllegalStateException.class, f::end);
    assertEquals("no packet fragment open", e.getMessage());
  }

  @Test
  void aContinuationFragmentIsNeverCompacted() {
    RangeCollector c = new RangeCollector(4096);
    c.stream.writeFixed32(-1); // garbage where the caller's header goes
    c.stream.reset(c.ranges.getFirst(), 4, 4096); // as getNewBuffer does: range after the header
    PacketFragment f = new PacketFragment(c.stream);
    f.beginContinuation(c.ranges.getFirst(), 0);
    c.writer.appendVarInt(1, 1);
    assertEquals(2, f.end());
    assertEquals("828080000801", hex(c.ranges.getFirst().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), 0, 6));
  }
}
