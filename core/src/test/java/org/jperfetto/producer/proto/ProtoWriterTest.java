package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProtoWriterTest {

  interface ProtobufWrite {
    void write(CodedOutputStream out) throws IOException;
  }

  /** Writes with ours through ranges of rangeSize bytes and with protobuf-java; both must agree. */
  private static void assertSameBytes(int rangeSize, Consumer<ProtoWriter> ours, ProtobufWrite theirs)
      throws IOException {
    RangeCollector c = new RangeCollector(rangeSize);
    ours.accept(c.writer);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(expected);
    theirs.write(out);
    out.flush();
    assertEquals(HexFormat.of().formatHex(expected.toByteArray()), HexFormat.of().formatHex(c.bytes()));
  }

  // Range size 1 drives every scalar through the byte-by-byte slow path, 4096 through the fast path.
  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4096})
  void varIntsMatchProtobuf(int rangeSize) throws IOException {
    long[] values = {0, 1, 127, 128, 300, 16383, 16384, Integer.MAX_VALUE, -1, Long.MIN_VALUE, Long.MAX_VALUE};
    assertSameBytes(rangeSize, w -> {
      for (long v : values) {
        w.appendVarInt(1, v);
        w.appendVarInt(ProtoWire.MAX_FIELD_NUMBER, v);
      }
    }, out -> {
      for (long v : values) {
        out.writeUInt64(1, v);
        out.writeUInt64(ProtoWire.MAX_FIELD_NUMBER, v);
      }
    });
    // int32 fields: a negative value is sign-extended to 10 bytes in protobuf too.
    assertSameBytes(rangeSize, w -> w.appendVarInt(5, -7), out -> out.writeInt32(5, -7));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 4096})
  void signedVarIntsMatchProtobuf(int rangeSize) throws IOException {
    long[] values = {0, -1, 1, -64, 64, Long.MIN_VALUE, Long.MAX_VALUE};
    assertSameBytes(rangeSize, w -> {
      for (long v : values) {
        w.appendSignedVarInt(2, v);
      }
      w.appendSignedVarInt(3, Integer.MIN_VALUE);
    }, out -> {
      for (long v : values) {
        out.writeSInt64(2, v);
      }
      out.writeSInt32(3, Integer.MIN_VALUE);
    });
    assertEquals(ProtoWire.zigZagEncode((long) Integer.MIN_VALUE) & 0xFFFF_FFFFL,
        ProtoWire.zigZagEncode(Integer.MIN_VALUE) & 0xFFFF_FFFFL);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4096})
  void fixedFloatDoubleBoolMatchProtobuf(int rangeSize) throws IOException {
    assertSameBytes(rangeSize, w -> {
      w.appendFixed32(1, 0xDEADBEEF);
      w.appendFixed64(2, 0x0123456789ABCDEFL);
      w.appendFloat(3, -1.5f);
      w.appendDouble(4, Math.PI);
      w.appendBool(5, true);
      w.appendBool(6, false);
    }, out -> {
      out.writeFixed32(1, 0xDEADBEEF);
      out.writeFixed64(2, 0x0123456789ABCDEFL);
      out.writeFloat(3, -1.5f);
      out.writeDouble(4, Math.PI);
      out.writeBool(5, true);
      out.writeBool(6, false);
    });
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 7, 4096})
  void bytesMatchProtobuf(int rangeSize) throws IOException {
    byte[] big = new byte[300];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 7);
    }
    MemorySegment source = MemorySegment.ofArray(big);
    assertSameBytes(rangeSize, w -> {
      w.appendBytes(1, new byte[0]);
      w.appendBytes(2, big);
      w.appendBytes(3, big, 10, 5);
      w.appendBytes(4, source, 100, 200);
    }, out -> {
      out.writeByteArray(1, new byte[0]);
      out.writeByteArray(2, big);
      out.writeByteArray(3, big, 10, 5);
      out.writeByteArray(4, big, 100, 200);
    });
  }

  static final List<String> TRICKY = List.of(
      "", "a", "ref_slice", "é", "ÿ", "\u0100", "\u07ff", "\u0800", "€", "\uffff", "日本語テキスト",
      "😀", "a😀b", "\ud83d", "\ude00", "x\ud83dy", "\ude00\ud83d", "\ud83d\ud83d\ude00", "end\ud83d",
      "Grüße, Jürgen ❤ 𝄞", "0123456789".repeat(30),
      // one-pass path (<= 127 chars): UTF-8 of 127 bytes (1-byte length), 128 and 381 (2-byte length)
      "é".repeat(63) + "a", "é".repeat(64), "日".repeat(127), "😀".repeat(63) + "x", "ascii!!".repeat(18));

  @ParameterizedTest
  @ValueSource(ints = {1, 5, 4096})
  void stringsEncodeLikeStringGetBytes(int rangeSize) throws IOException {
    for (String s : TRICKY) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      assertEquals(utf8.length, Utf8.encodedLength(s), () -> "length of " + HexFormat.of().formatHex(utf8));
      assertSameBytes(rangeSize, w -> w.appendString(9, s), out -> out.writeByteArray(9, utf8));
    }
  }

  @Test
  void nestedSizesCompactUpTo127BytesAndTakeFourAbove() {
    RangeCollector c = new RangeCollector(4096);
    ProtoWriter w = c.writer;
    w.beginNested(1);
    assertEquals(0, w.endNested());
    w.beginNested(2);
    w.appendBytes(1, new byte[125]); // 1 + 1 + 125 = 127
    assertEquals(127, w.endNested());
    w.beginNested(3);
    w.appendBytes(1, new byte[126]); // 128
    assertEquals(128, w.endNested());
    byte[] b = c.bytes();
    assertEquals("0a00", hex(b, 0, 2));
    assertEquals("127f0a7d", hex(b, 2, 4));
    int third = 2 + 2 + 127;
    assertEquals("1a80818000", hex(b, third, 5), "128 as 80 81 80 00");
    assertEquals(third + 5 + 128, b.length);
  }

  @Test
  void nestedMessagesMatchTheReferenceEncoding() {
    List<ProtoTree> tree = List.of(
        new ProtoTree.VarInt(8, 123456789),
        new ProtoTree.Nested(11, List.of(
            new ProtoTree.VarInt(10, 3),
            new ProtoTree.Nested(4, List.of(new ProtoTree.VarInt(1, 1), new ProtoTree.VarInt(4, 42))),
            new ProtoTree.Str(23, "x".repeat(200)))),
        new ProtoTree.VarInt(10, 1));
    RangeCollector c = new RangeCollector(4096);
    ProtoTree.write(c.writer, tree);
    assertArrayEquals(ProtoTree.reference(tree), c.bytes());
    ProtoTree.assertParsesTo(tree, c.bytes());
  }

  @Test
  void aMessageThatLeftItsRangeKeepsAFourByteSizeInPlace() {
    // Ranges stay valid here (no redirect), so the size is written where it was reserved.
    RangeCollector c = new RangeCollector(16);
    c.writer.beginNested(1);
    c.writer.appendBytes(2, new byte[20]);
    assertEquals(22, c.writer.endNested());
    byte[] b = c.bytes();
    assertEquals("0a96808000", hex(b, 0, 5));
    assertTrue(c.patches.isEmpty());
  }

  @Test
  void nestingDepthIsBoundedWithAClearError() {
    RangeCollector c = new RangeCollector(4096);
    for (int i = 0; i < ProtoWriter.MAX_NESTING_DEPTH; i++) {
      c.writer.beginNested(1);
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> c.writer.beginNested(7));
    assertEquals("nesting too deep: field=7 depth=100 max=100", e.getMessage());
    c.writer.endAllNested();
    assertEquals(0, c.writer.depth());
    ProtoTree.assertParsesTo(deep(ProtoWriter.MAX_NESTING_DEPTH), c.bytes());
    assertThrows(IllegalStateException.class, c.writer::endNested);
  }

  private static List<ProtoTree> deep(int levels) {
    return levels == 0 ? List.of() : List.of(new ProtoTree.Nested(1, deep(levels - 1)));
  }

  @Test
  void fieldNumbersOutOfRangeAreRejected() {
    RangeCollector c = new RangeCollector(64);
    assertThrows(IllegalArgumentException.class, () -> c.writer.appendVarInt(0, 1));
    assertThrows(IllegalArgumentException.class, () -> c.writer.appendVarInt(-3, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> c.writer.appendString(1 << 29, "x"));
    assertEquals("field number out of range: field=536870912", e.getMessage());
  }

  @Test
  void redirectedSizesGoToThePatchListAndTheChunkStaysZeroed() {
    RangeCollector c = new RangeCollector(4096);
    ProtoWriter w = c.writer;
    w.appendVarInt(1, 5);
    w.beginNested(2); // tag at 2, size field at 3..6
    w.beginNested(3); // tag at 7, size field at 8..11
    w.appendVarInt(1, 1);
    MemorySegment first = c.ranges.getFirst();
    assertEquals(2, w.redirectSizeFields(first, 2, 4096, 77));
    assertEquals(2, c.patches.size());
    assertEquals(0, w.redirectSizeFields(first, 0, 4096, 77), "already moved");
    assertEquals(2, w.endNested());
    assertEquals(2 + 4 + 1, w.endNested(), "the inner size stays 4 bytes in the total");
    assertEquals("00000000", hex(c.bytes(), 3, 4), "reserved bytes untouched");
    assertEquals("1a00000000", hex(c.bytes(), 7, 5), "reserved bytes untouched");
    assertEquals(77, c.patches.frontChunkId());
    assertEquals(1, c.patches.frontOffset(), "offset from the payload begin");
    assertEquals(Varints.redundant(7), c.patches.frontSizeField());
    c.patches.popFront();
    assertEquals(6, c.patches.frontOffset());
    assertEquals(Varints.redundant(2), c.patches.frontSizeField());
  }

  @Test
  void discardedSizesAreWrittenNowhere() {
    RangeCollector c = new RangeCollector(4096);
    c.writer.beginNested(2);
    c.writer.discardSizeFields(c.ranges.getFirst(), 0, 4096);
    c.writer.appendVarInt(1, 1);
    c.writer.endNested();
    assertEquals("1200000000", hex(c.bytes(), 0, 5));
    assertTrue(c.patches.isEmpty());
  }

  @Test
  void patchOffsetsBeyondSixteenBitsAreRejected() {
    RangeCollector c = new RangeCollector(1 << 17);
    c.writer.appendBytes(1, new byte[70000]);
    c.writer.beginNested(2);
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> c.writer.redirectSizeFields(c.ranges.getFirst(), 0, 1 << 17, 9));
    assertTrue(e.getMessage().startsWith("size field beyond patchable offset: chunk=9 offset="), e.getMessage());
  }

  private static String hex(byte[] b, int from, int length) {
    return HexFormat.of().formatHex(b, from, from + length);
  }
}
