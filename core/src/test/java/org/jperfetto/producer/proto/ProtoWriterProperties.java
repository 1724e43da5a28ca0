package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.statistics.Statistics;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.wire.ProtoWire;

/**
 * Random message trees written by {@link ProtoWriter} through chunks of random small sizes, then
 * patched and glued as the service would, parse with protobuf-java to the same content.
 */
class ProtoWriterProperties {

  @Property(tries = 300)
  void smallChunksReassembleToTheSameMessages(
      @ForAll("packets") @Size(min = 1, max = 6) List<List<ProtoTree>> packets,
      @ForAll @IntRange(min = 16, max = 64) int maxChunk, @ForAll long seed) {
    checkSmallChunks(packets, maxChunk, seed);
    // The point of tiny chunks: sizes must really go through patches and packets through fragments.
    Statistics.label("patched").coverage(c -> c.check(true).percentage(p -> p > 25));
    Statistics.label("fragmented").coverage(c -> c.check(true).percentage(p -> p > 35));
  }

  @Property(tries = 3000)
  @Tag("stress")
  void smallChunksReassembleToTheSameMessagesLong(
      @ForAll("packets") @Size(min = 1, max = 12) List<List<ProtoTree>> packets,
      @ForAll @IntRange(min = 16, max = 256) int maxChunk, @ForAll long seed) {
    checkSmallChunks(packets, maxChunk, seed);
  }

  private static void checkSmallChunks(List<List<ProtoTree>> packets, int maxChunk, long seed) {
    Random random = new Random(seed);
    FakeTraceWriter tw = new FakeTraceWriter(() -> 16 + random.nextInt(maxChunk - 15));
    for (List<ProtoTree> packet : packets) {
      ProtoTree.write(tw.beginPacket(), packet);
      tw.endPacket();
    }
    List<byte[]> out = tw.reassemble();
    Statistics.label("patched").collect(!tw.sent.isEmpty());
    Statistics.label("fragmented").collect(tw.fragments.size() > packets.size());
    assertEquals(packets.size(), out.size(), "packet count");
    for (int i = 0; i < packets.size(); i++) {
      ProtoTree.assertParsesTo(packets.get(i), out.get(i));
    }
  }

  @Property(tries = 200)
  void packetsCaughtWithoutAFreeChunkAreDroppedAndTheRestSurvive(
      @ForAll("packets") @Size(min = 1, max = 8) List<List<ProtoTree>> packets,
      @ForAll @IntRange(min = 16, max = 64) int maxChunk, @ForAll @IntRange(min = 30, max = 95) int freePercent,
      @ForAll long seed) {
    Random random = new Random(seed);
    FakeTraceWriter tw = new FakeTraceWriter(() -> 16 + random.nextInt(maxChunk - 15),
        () -> random.nextInt(100) < freePercent);
    for (List<ProtoTree> packet : packets) {
      ProtoTree.write(tw.beginPacket(), packet);
      tw.endPacket();
    }
    List<byte[]> out = tw.reassemble();
    List<List<ProtoTree>> kept = new ArrayList<>();
    for (int i = 0; i < packets.size(); i++) {
      if (!tw.dropped.get(i)) {
        kept.add(packets.get(i));
      }
    }
    Statistics.label("some dropped").collect(kept.size() < packets.size());
    assertEquals(kept.size(), out.size(), "packets kept");
    for (int i = 0; i < kept.size(); i++) {
      ProtoTree.assertParsesTo(kept.get(i), out.get(i));
    }
    Statistics.label("some dropped").coverage(c -> c.check(true).percentage(p -> p > 20));
  }

  @Property(tries = 300)
  void oneBigChunkNeedsNoPatchAndCompactsShortSizes(
      @ForAll("packets") @Size(min = 1, max = 6) List<List<ProtoTree>> packets) {
    FakeTraceWriter tw = new FakeTraceWriter(() -> 1 << 20);
    for (List<ProtoTree> packet : packets) {
      ProtoTree.write(tw.beginPacket(), packet);
      tw.endPacket();
    }
    List<byte[]> out = tw.reassemble();
    assertEquals(List.of(), tw.sent, "no patches when nothing spans a chunk");
    assertEquals(1, tw.chunks.size());
    assertEquals(0, tw.chunks.getFirst().flags, "no chunk flags");
    assertEquals(packets.size(), out.size());
    for (int i = 0; i < packets.size(); i++) {
      // Byte-exact: nested sizes up to 127 take one byte, longer ones four.
      assertArrayEquals(ProtoTree.reference(packets.get(i)), out.get(i));
      ProtoTree.assertParsesTo(packets.get(i), out.get(i));
    }
    for (FakeTraceWriter.Fragment f : tw.fragments) {
      assertEquals(f.size() <= PacketFragments.MAX_COMPACT_SIZE ? 1 : 4, f.headerBytes(), f::toString);
    }
  }

  @Provide
  Arbitrary<List<List<ProtoTree>>> packets() {
    return message(4).list().ofMaxSize(6);
  }

  private static Arbitrary<List<ProtoTree>> message(int depth) {
    Arbitrary<ProtoTree> field = depth == 0
        ? leaf()
        : Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(3, leaf()),
            net.jqwik.api.Tuple.of(2, Combinators.combine(fieldNumber(), message(depth - 1))
                .as(ProtoTree.Nested::new)));
    return field.list().ofMaxSize(depth == 0 ? 6 : 5).map(ArrayList::new);
  }

  private static Arbitrary<Integer> fieldNumber() {
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(1, 15)),
        net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(16, 2047)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, ProtoWire.MAX_FIELD_NUMBER)));
  }

  private static Arbitrary<ProtoTree> leaf() {
    Arbitrary<Integer> f = fieldNumber();
    return Arbitraries.oneOf(
        Combinators.combine(f, Arbitraries.longs()).as(ProtoTree.VarInt::new),
        Combinators.combine(f, Arbitraries.longs().between(0, 300)).as(ProtoTree.VarInt::new),
        Combinators.combine(f, Arbitraries.longs()).as(ProtoTree.SignedVarInt::new),
        Combinators.combine(f, Arbitraries.integers()).as(ProtoTree.Fixed32::new),
        Combinators.combine(f, Arbitraries.longs()).as(ProtoTree.Fixed64::new),
        Combinators.combine(f, Arbitraries.doubles()).as(ProtoTree.Dbl::new),
        Combinators.combine(f, Arbitraries.of(true, false)).as(ProtoTree.Bool::new),
        Combinators.combine(f, strings()).as(ProtoTree.Str::new),
        Combinators.combine(f, Arbitraries.bytes().array(byte[].class).ofMaxSize(300))
            .as(ProtoTree.Bytes::new));
  }

  private static Arbitrary<String> strings() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ascii().ofMaxLength(40),
        Arbitraries.strings().all().ofMaxLength(40), // includes unpaired surrogates
        Arbitraries.strings().withCharRange((char) 0xa0, (char) 0x7ff).ofMaxLength(150),
        Arbitraries.integers().between(0x10000, 0x10FFFF).list().ofMaxSize(20)
            .map(cps -> cps.stream().collect(StringBuilder::new, StringBuilder::appendCodePoint,
                StringBuilder::append).toString()));
  }

  @Property(tries = 200)
  void utf8EqualsStringGetBytes(@ForAll("anyString") String s) {
    FakeTraceWriter tw = new FakeTraceWriter(() -> 16);
    tw.beginPacket().appendString(1, s);
    tw.endPacket();
    byte[] packet = tw.reassemble().getFirst();
    ProtoTree.assertParsesTo(List.of(new ProtoTree.Str(1, s)), packet);
    assertTrue(packet.length > 0);
  }

  @Provide
  Arbitrary<String> anyString() {
    return strings();
  }
}
