package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnknownFieldSet;
import java.io.IOException;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;

/**
 * Any set of future fields appended to a real TracePacket (numbers TracePacket does not declare,
 * every wire type) comes back unchanged from parse and serialize. protobuf-java writes unknown
 * fields after the known ones, in number order, so the generated numbers are kept sorted.
 */
class UnknownFieldsProperties {
  /** A future field: number and wire type (0 varint, 1 fixed64, 2 bytes, 5 fixed32) and a value. */
  record Future(int number, int wireType, long value) {}

  @Provide
  Arbitrary<List<Future>> futures() {
    Arbitrary<Integer> number = Arbitraries.integers().between(1, 50_000)
        .filter(n -> TracePacket.getDescriptor().findFieldByNumber(n) == null)
        .filter(n -> n < 19_000 || n > 19_999); // reserved for the protobuf implementation
    Arbitrary<Integer> wireType = Arbitraries.of(0, 1, 2, 5);
    Arbitrary<Future> future = Combinators.combine(number, wireType, Arbitraries.longs())
        .as(Future::new);
    return future.list().ofMaxSize(12)
        .map(list -> List.copyOf(list.stream().collect(
            Collectors.toMap(Future::number, f -> f, (a, b) -> a, TreeMap::new)).values()));
  }

  private static final TracePacket KNOWN = TracePacket.newBuilder()
      .setTimestamp(123456789)
      .setTrustedPacketSequenceId(3)
      .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN).setNameIid(2)
          .addCategoryIids(1).setTrackUuid(77)
          .addDebugAnnotations(DebugAnnotation.newBuilder().setNameIid(1).setIntValue(5)))
      .setSequenceFlags(TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE)
      .build();

  private static ByteString append(ByteString known, List<Future> futures) throws IOException {
    ByteString.Output out = ByteString.newOutput();
    CodedOutputStream coded = CodedOutputStream.newInstance(out);
    for (Future f : futures) {
      switch (f.wireType()) {
        case 0 -> coded.writeUInt64(f.number(), f.value());
        case 1 -> coded.writeFixed64(f.number(), f.value());
        case 2 -> coded.writeBytes(f.number(), ByteString.copyFromUtf8(Long.toHexString(f.value())));
        default -> coded.writeFixed32(f.number(), (int) f.value());
      }
    }
    coded.flush();
    return known.concat(out.toByteString());
  }

  @Property(tries = 200)
  void futureFieldsRoundTrip(@ForAll("futures") List<Future> futures) throws IOException {
    check(futures);
  }

  @Property(tries = 20_000)
  @Tag("stress")
  void futureFieldsRoundTripLong(@ForAll("futures") List<Future> futures) throws IOException {
    check(futures);
  }

  private static void check(List<Future> futures) throws IOException {
    ByteString bytes = append(KNOWN.toByteString(), futures);
    TracePacket parsed = TracePacket.parseFrom(bytes);
    assertEquals(futures.size(), parsed.getUnknownFields().asMap().size());
    assertEquals(KNOWN, parsed.toBuilder().setUnknownFields(UnknownFieldSet.getDefaultInstance()).build());
    assertEquals(bytes, parsed.toByteString());
  }
}
