package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jperfetto.wire.Varints;

/**
 * A protobuf message as a list of fields, for tests: written with {@link ProtoWriter}, encoded by a
 * reference encoder built on protobuf-java, and checked against bytes parsed with protobuf-java.
 */
sealed interface ProtoTree {
  int field();

  record VarInt(int field, long value) implements ProtoTree {}

  record SignedVarInt(int field, long value) implements ProtoTree {}

  record Fixed32(int field, int value) implements ProtoTree {}

  record Fixed64(int field, long value) implements ProtoTree {}

  record Dbl(int field, double value) implements ProtoTree {}

  record Bool(int field, boolean value) implements ProtoTree {}

  record Str(int field, String value) implements ProtoTree {}

  record Bytes(int field, byte[] value) implements ProtoTree {
    @Override
    public String toString() {
      return "Bytes[" + field + ", len=" + value.length + "]";
    }
  }

  record Nested(int field, List<ProtoTree> fields) implements ProtoTree {}

  /** Appends the fields to the writer's current message. */
  static void write(ProtoWriter w, List<ProtoTree> fields) {
    for (ProtoTree f : fields) {
      switch (f) {
        case VarInt v -> w.appendVarInt(v.field(), v.value());
        case SignedVarInt v -> w.appendSignedVarInt(v.field(), v.value());
        case Fixed32 v -> w.appendFixed32(v.field(), v.value());
        case Fixed64 v -> w.appendFixed64(v.field(), v.value());
        case Dbl v -> w.appendDouble(v.field(), v.value());
        case Bool v -> w.appendBool(v.field(), v.value());
        case Str v -> w.appendString(v.field(), v.value());
        case Bytes v -> w.appendBytes(v.field(), v.value());
        case Nested n -> {
          w.beginNested(n.field());
          write(w, n.fields());
          w.endNested();
        }
      }
    }
  }

  /**
   * What protozero writes when nothing spans a range: protobuf-java's encoding, except that a nested
   * message's size is 1 byte up to 127 and a 4-byte redundant varint above.
   */
  static byte[] reference(List<ProtoTree> fields) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      for (ProtoTree f : fields) {
        switch (f) {
          case VarInt v -> out.writeUInt64(v.field(), v.value());
          case SignedVarInt v -> out.writeSInt64(v.field(), v.value());
          case Fixed32 v -> out.writeFixed32(v.field(), v.value());
          case Fixed64 v -> out.writeFixed64(v.field(), v.value());
          case Dbl v -> out.writeDouble(v.field(), v.value());
          case Bool v -> out.writeBool(v.field(), v.value());
          case Str v -> out.writeString(v.field(), v.value());
          case Bytes v -> out.writeByteArray(v.field(), v.value());
          case Nested n -> {
            byte[] body = reference(n.fields());
            out.writeTag(n.field(), WireFormat.WIRETYPE_LENGTH_DELIMITED);
            if (body.length <= 127) {
              out.writeRawByte((byte) body.length);
            } else {
              out.writeFixed32NoTag(Varints.redundant(body.length));
            }
            out.writeRawBytes(body);
          }
        }
      }
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses encoded with protobuf-java's CodedInputStream and checks it holds exactly fields. */
  static void assertParsesTo(List<ProtoTree> fields, byte[] encoded) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(encoded);
      for (ProtoTree f : fields) {
        int tag = in.readTag();
        assertEquals(f.field(), WireFormat.getTagFieldNumber(tag), () -> "field number of " + f);
        switch (f) {
          case VarInt v -> assertEquals(v.value(), in.readUInt64(), f::toString);
          case SignedVarInt v -> assertEquals(v.value(), in.readSInt64(), f::toString);
          case Fixed32 v -> assertEquals(v.value(), in.readFixed32(), f::toString);
          case Fixed64 v -> assertEquals(v.value(), in.readFixed64(), f::toString);
          case Dbl v -> assertEquals(Double.doubleToRawLongBits(v.value()),
              Double.doubleToRawLongBits(in.readDouble()), f::toString);
          case Bool v -> assertEquals(v.value(), in.readBool(), f::toString);
          case Str v -> assertArrayEquals(v.value().getBytes(StandardCharsets.UTF_8), in.readByteArray(),
              f::toString);
          case Bytes v -> assertArrayEquals(v.value(), in.readByteArray(), f::toString);
          case Nested n -> {
            assertEquals(WireFormat.WIRETYPE_LENGTH_DELIMITED, WireFormat.getTagWireType(tag));
            assertParsesTo(n.fields(), in.readByteArray());
          }
        }
      }
      assertTrue(in.isAtEnd(), "trailing bytes after the expected fields");
    } catch (IOException e) {
      throw new AssertionError("protobuf-java cannot parse the message: " + e.getMessage(), e);
    }
  }
}
