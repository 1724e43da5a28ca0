package org.jperfetto.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The toolkit's varints against protobuf-java's: every size, every encoding (into arrays, into
 * segments, packed into longs) and the redundant form give the bytes protobuf-java writes, or
 * reads back to the same value.
 */
class VarintsProperties {
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** protobuf-java's bytes for v as a uint64 varint. */
  private static byte[] protobufBytes(long v) throws Exception {
    byte[] out = new byte[CodedOutputStream.computeUInt64SizeNoTag(v)];
    CodedOutputStream cos = CodedOutputStream.newInstance(out);
    cos.writeUInt64NoTag(v);
    cos.checkNoSpaceLeft();
    return out;
  }

  @Property(tries = 2000)
  void encodingsAreProtobufJavas(@ForAll("values") long v) throws Exception {
    byte[] expected = protobufBytes(v);
    assertEquals(expected.length, Varints.size(v));
    assertEquals(expected.length == 1, Varints.isOneByte(v));

    byte[] array = new byte[Varints.MAX_SIZE + 3];
    assertEquals(3 + expected.length, Varints.put(array, 3, v));
    assertArrayEquals(expected, Arrays.copyOfRange(array, 3, 3 + expected.length));

    MemorySegment segment = MemorySegment.ofArray(new byte[Varints.MAX_SIZE + 5]);
    assertEquals(5 + expected.length, Varints.put(segment, 5, v));
    assertArrayEquals(expected, segment.asSlice(5, expected.length).toArray(ValueLayout.JAVA_BYTE));

    // Packed into longs: the first eight bytes, then the rest; zeros past the end.
    byte[] padded = Arrays.copyOf(expected, 16);
    MemorySegment p = MemorySegment.ofArray(padded);
    assertEquals(p.get(LONG_LE, 0), Varints.packedLow(v));
    assertEquals(p.get(LONG_LE, 8), Varints.packedHigh(v));
    if ((v >>> 56) == 0) {
      assertEquals(p.get(LONG_LE, 0), Varints.packed(v));
    } else {
      assertThrows(IllegalArgumentException.class, () -> Varints.packed(v));
    }
  }

  @Property(tries = 1000)
  void redundantFormReadsBackAsTheValue(@ForAll("redundantValues") int v) throws Exception {
    MemorySegment s = MemorySegment.ofArray(new byte[Varints.REDUNDANT_SIZE + 2]);
    Varints.writeRedundant(s, 1, v);
    byte[] bytes = s.asSlice(1, Varints.REDUNDANT_SIZE).toArray(ValueLayout.JAVA_BYTE);
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    assertEquals(v, in.readUInt32());
    assertEquals(Varints.REDUNDANT_SIZE, in.getTotalBytesRead());
    long read = Varints.readShort(s, 1, s.byteSize(), Varints.REDUNDANT_SIZE);
    assertEquals(v, Varints.shortValue(read));
    assertEquals(Varints.REDUNDANT_SIZE, Varints.shortLength(read));
  }

  @Example
  void redundantFormRefusesWhatDoesNotFit() {
    MemorySegment s = MemorySegment.ofArray(new byte[8]);
    assertThrows(IllegalArgumentException.class, () -> Varints.writeRedundant(s, 0, Varints.MAX_REDUNDANT + 1));
    assertThrows(IllegalArgumentException.class, () -> Varints.writeRedundant(s, 0, -1));
    assertEquals(0x00_80_80_81, Varints.redundant(1)); // 81 80 80 00
  }

  @Provide
  Arbitrary<Long> values() {
    // Every length from 1 to 10 bytes equally often, and the edges of each.
    Arbitrary<Long> byLength = Arbitraries.integers().between(0, 63)
        .flatMap(bits -> Arbitraries.longs().map(x -> bits == 0 ? x & 1 : (x >>> (63 - bits)) | (1L << bits)));
    return Arbitraries.oneOf(byLength, Arbitraries.of(0L, 127L, 128L, (1L << 56) - 1, 1L << 56, -1L,
        Long.MIN_VALUE, Long.MAX_VALUE, Integer.toUnsignedLong(-1), (long) Integer.MIN_VALUE));
  }

  @Provide
  Arbitrary<Integer> redundantValues() {
    return Arbitraries.oneOf(Arbitraries.integers().between(0, Varints.MAX_REDUNDANT),
        Arbitraries.of(0, 1, 127, 128, 16383, 16384, Varints.MAX_REDUNDANT));
  }
}
