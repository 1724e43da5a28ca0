package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks shared by the proto tests: unknown fields anywhere in a message tree (the symptom of a
 * field-number mismatch) and a canonical wire form to compare captured bytes with ours.
 */
final class ProtoAssertions {
  private ProtoAssertions() {}

  /** An unknown field found at {@code path}, in a message of type {@code type}. */
  record UnknownField(String path, String type, int number) {
    String key() {
      return type + "#" + number;
    }

    @Override
    public String toString() {
      return path + ": #" + number + " in " + type;
    }
  }

  /** Every unknown field in the tree; empty when everything is modelled. */
  static List<UnknownField> unknownFields(Message message) {
    List<UnknownField> found = new ArrayList<>();
    collectUnknown(message, message.getDescriptorForType().getName(), found);
    return found;
  }

  private static void collectUnknown(Message message, String path, List<UnknownField> found) {
    for (int number : message.getUnknownFields().asMap().keySet()) {
      found.add(new UnknownField(path, message.getDescriptorForType().getFullName(), number));
    }
    for (Map.Entry<FieldDescriptor, Object> e : message.getAllFields().entrySet()) {
      FieldDescriptor field = e.getKey();
      if (field.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      if (field.isRepeated()) {
        List<?> items = (List<?>) e.getValue();
        for (int i = 0; i < items.size(); i++) {
          collectUnknown((Message) items.get(i), path + "." + field.getName() + "[" + i + "]", found);
        }
      } else {
        collectUnknown((Message) e.getValue(), path + "." + field.getName(), found);
      }
    }
  }

  static void assertNoUnknownFields(Message message, String what) {
    List<UnknownField> unknown = unknownFields(message);
    assertTrue(unknown.isEmpty(), () -> what + ": unknown fields (field-number mismatch?) " + unknown);
  }

  /**
   * Asserts the tree has no unknown fields except the listed retired ones ("full.Name#number"),
   * each of which must be a number our declaration reserves, as upstream does for removed fields.
   */
  static void assertNoUnknownFieldsExceptRetired(Message message, Set<String> retired, String what) {
    List<UnknownField> unexpected =
        unknownFields(message).stream().filter(u -> !retired.contains(u.key())).toList();
    assertTrue(unexpected.isEmpty(), () -> what + ": unknown fields (field-number mismatch?) " + unexpected);
  }

  /** True when {@code type} declares {@code number} in a reserved range. */
  static boolean isReserved(Descriptor type, int number) {
    for (DescriptorProto.ReservedRange r : type.toProto().getReservedRangeList()) {
      if (number >= r.getStart() && number < r.getEnd()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The bytes as protobuf-java would write them: each varint (tags, values, lengths) minimal, and
   * the fields of every message stably sorted by number, recursing into fields {@code type}
   * declares as messages. Upstream's protozero writer reserves 4 bytes for nested lengths (a
   * padded, redundant varint) and may emit fields out of number order, so captured bytes are
   * compared with ours in this form; both sides are compared after it, so values still must match.
   */
  static ByteString canonical(Descriptor type, ByteString bytes) {
    try {
      return canonicalOrThrow(type, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException("not a valid " + type.getFullName() + ": " + e.getMessage(), e);
    }
  }

  private record WireField(int number, ByteString encoded) {}

  private static ByteString canonicalOrThrow(Descriptor type, ByteString bytes) throws IOException {
    CodedInputStream in = bytes.newCodedInput();
    List<WireField> fields = new ArrayList<>();
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      int number = WireFormat.getTagFieldNumber(tag);
      ByteString.Output buffer = ByteString.newOutput();
      CodedOutputStream out = CodedOutputStream.newInstance(buffer);
      switch (WireFormat.getTagWireType(tag)) {
        case WireFormat.WIRETYPE_VARINT -> out.writeUInt64(number, in.readRawVarint64());
        case WireFormat.WIRETYPE_FIXED64 -> out.writeFixed64(number, in.readRawLittleEndian64());
        case WireFormat.WIRETYPE_FIXED32 -> out.writeFixed32(number, in.readRawLittleEndian32());
        case WireFormat.WIRETYPE_LENGTH_DELIMITED -> {
          ByteString value = in.readBytes();
          FieldDescriptor field = type.findFieldByNumber(number);
          if (field != null && field.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
            value = canonicalOrThrow(field.getMessageType(), value);
          }
          out.writeBytes(number, value);
        }
        default -> throw new InvalidProtocolBufferException(
            "unsupported wire type in " + type.getFullName() + ": tag=" + tag);
      }
      out.flush();
      fields.add(new WireField(number, buffer.toByteString()));
    }
    fields.sort(Comparator.comparingInt(WireField::number));
    ByteString result = ByteString.EMPTY;
    for (WireField f : fields) {
      result = result.concat(f.encoded());
    }
    return result;
  }

  /**
   * Asserts that re-serializing {@code parsed} gives {@code captured}: byte for byte when the
   * capture is already canonical, otherwise after canonicalising the capture. Returns whether the
   * capture was byte-identical to our encoding.
   */
  static boolean assertReserializes(ByteString captured, Message parsed, String what) {
    ByteString ours = parsed.toByteString();
    if (ours.equals(captured)) {
      return true;
    }
    assertEquals(hex(canonical(parsed.getDescriptorForType(), captured)), hex(ours),
        what + ": re-serialized " + parsed.getDescriptorForType().getFullName() + " differs");
    return false;
  }

  static String hex(ByteString bytes) {
    StringBuilder sb = new StringBuilder(bytes.size() * 2);
    for (int i = 0; i < bytes.size(); i++) {
      sb.append(Character.forDigit((bytes.byteAt(i) >> 4) & 0xf, 16))
          .append(Character.forDigit(bytes.byteAt(i) & 0xf, 16));
    }
    return sb.toString();
  }
}
