package org.jperfetto.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class ProtoCursorTest {
  private final ProtoCursor outer = new ProtoCursor();
  private final ProtoCursor inner = new ProtoCursor();

  @Test
  void readMessagePointsTheOtherCursorAtTheNestedBytesAndMovesPastThem() {
    // field 1 = {field 2 = 7}, then field 3 = 9
    MemorySegment m = MemorySegment.ofArray(new byte[] {0x0a, 0x02, 0x10, 0x07, 0x18, 0x09});
    outer.reset(m, 0, m.byteSize());
    assertEquals(ProtoWire.makeTag(1, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED), outer.readTag());
    ProtoCursor nested = outer.readMessage(inner);
    assertEquals(inner, nested);
    assertEquals(4, outer.position(), "the outer cursor is past the nested message");
    assertEquals(ProtoWire.makeTag(2, ProtoWire.WIRE_TYPE_VARINT), nested.readTag());
    assertEquals(7, nested.readVarint());
    assertFalse(nested.hasMore(), "the nested cursor ends with the message");
    assertEquals(ProtoWire.makeTag(3, ProtoWire.WIRE_TYPE_VARINT), outer.readTag());
    assertEquals(9, outer.readVarint());
    assertFalse(outer.failed() || nested.failed());
  }

  @Test
  void aLengthPastTheEndFailsTheOuterCursorAndGivesTheNestedOneNothing() {
    MemorySegment m = MemorySegment.ofArray(new byte[] {0x0a, 0x05, 0x10, 0x07});
    outer.reset(m, 0, m.byteSize());
    outer.readTag();
    ProtoCursor nested = outer.readMessage(inner);
    assertTrue(outer.failed());
    assertFalse(outer.hasMore());
    assertFalse(nested.hasMore(), "no bytes to read");
    assertFalse(nested.failed());
  }
}
