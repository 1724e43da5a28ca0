package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.testing.Fixtures;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;
import org.junit.jupiter.api.Test;

/**
 * Replays the SMB written by upstream v58's TraceWriter (test-fixtures/interop/smb): its size-field
 * compaction must be the one we implement, and every packet it wrote inside one chunk, re-written
 * field by field with {@link ProtoWriter}, must come out byte for byte the same.
 */
class ProtoWriterInteropTest {
  private static final int PAGE_SIZE = 4096;
  private static final int PAGE_HEADER = 8;
  private static final int CHUNK_HEADER = 8;
  private static final int CHUNK_SIZE = PAGE_SIZE - PAGE_HEADER; // layout Div1: one chunk per page
  private static final int FIRST_CONTINUES_FROM_PREV = 1;
  private static final int LAST_CONTINUES_ON_NEXT = 2;
  private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** A fragment found in a chunk: payload bytes, size-header length, and whether it is a whole packet. */
  record Fragment(byte[] data, int headerBytes, boolean whole) {}

  private static List<Fragment> fragments(String file) throws IOException {
    Path smb = Fixtures.interop("smb", file);
    MemorySegment m = MemorySegment.ofArray(Files.readAllBytes(smb));
    List<Fragment> out = new ArrayList<>();
    for (long page = 0; page < m.byteSize(); page += PAGE_SIZE) {
      assertEquals(0x10000003, m.get(ProtoWire.INT_LE, page), "page header at " + page);
      long chunk = page + PAGE_HEADER;
      int packets = m.get(U16, chunk + 6) & 0xFFFF;
      int count = packets & 0x3FF;
      int flags = packets >>> 10;
      long p = chunk + CHUNK_HEADER;
      long end = chunk + CHUNK_SIZE;
      for (int k = 0; k < count; k++) {
        int size = 0;
        int n = 0;
        int b;
        do {
          b = m.get(ValueLayout.JAVA_BYTE, p + n) & 0xFF;
          size |= (b & 0x7F) << (7 * n);
          n++;
        } while ((b & 0x80) != 0 && n < 4);
        p += n;
        if (size == Varints.MAX_REDUNDANT) {
          break; // drop-packet marker: nothing after it is data
        }
        assertTrue(p + size <= end, "fragment beyond its chunk at " + p);
        boolean continued = k == 0 && (flags & FIRST_CONTINUES_FROM_PREV) != 0;
        boolean continues = k == count - 1 && (flags & LAST_CONTINUES_ON_NEXT) != 0;
        out.add(new Fragment(m.asSlice(p, size).toArray(ValueLayout.JAVA_BYTE), n, !continued && !continues));
        p += size;
      }
    }
    return out;
  }

  @Test
  void v58CompactsExactlyTheWholeFragmentsBelow127Bytes() throws IOException {
    int compacted = 0;
    for (Fragment f : fragments("smb_v58_full.bin")) {
      if (f.whole()) {
        int expected = f.data().length <= PacketFragments.MAX_COMPACT_SIZE ? 1 : 4;
        assertEquals(expected, f.headerBytes(), "header of a whole fragment of " + f.data().length + " bytes");
      } else {
        assertEquals(4, f.headerBytes(), "a fragment of a spanning packet keeps 4 bytes");
      }
      compacted += f.headerBytes() == 1 ? 1 : 0;
    }
    assertEquals(16520, compacted, "1-byte fragment sizes, as the capture's README counts them");
  }

  @Test
  void rewritingV58PacketsGivesTheSameBytes() throws IOException {
    int checked = 0;
    int nested = 0;
    for (Fragment f : fragments("smb_v58_full.bin")) {
      if (!f.whole() || f.data().length == 0) {
        continue;
      }
      List<ProtoTree> tree = TreeGuess.parse(f.data());
      assertTrue(tree != null, "a v58 packet that is not a proto message");
      RangeCollector c = new RangeCollector(CHUNK_SIZE);
      ProtoTree.write(c.writer, tree);
      assertArrayEquals(f.data(), c.bytes(), () -> "packet " + tree);
      checked++;
      nested += TreeGuess.countNested(tree);
    }
    assertTrue(checked > 16000, "packets checked: " + checked);
    // track_event and its debug annotation at least: the compacted nested sizes were exercised.
    assertTrue(nested > checked, "nested messages: " + nested);
  }

  /** Reads raw protobuf bytes into a {@link ProtoTree}, guessing which length-delimited fields are messages. */
  static final class TreeGuess {
    private TreeGuess() {}

    /** The fields of bytes, or null when they are not a well-formed message. */
    static List<ProtoTree> parse(byte[] bytes) {
      List<ProtoTree> fields = new ArrayList<>();
      int[] pos = {0};
      while (pos[0] < bytes.length) {
        long tag = varint(bytes, pos);
        if (tag < 0 || (tag >>> 3) == 0 || (tag >>> 3) > ProtoWire.MAX_FIELD_NUMBER) {
          return null;
        }
        int field = (int) (tag >>> 3);
        switch ((int) tag & 7) {
          case ProtoWire.WIRE_TYPE_VARINT -> {
            long v = varint(bytes, pos);
            if (v == -1 && pos[0] < 0) {
              return null;
            }
            fields.add(new ProtoTree.VarInt(field, v));
          }
          case ProtoWire.WIRE_TYPE_FIXED64 -> {
            if (pos[0] + 8 > bytes.length) {
              return null;
            }
            fields.add(new ProtoTree.Fixed64(field, MemorySegment.ofArray(bytes).get(ProtoWire.LONG_LE, pos[0])));
            pos[0] += 8;
          }
          case ProtoWire.WIRE_TYPE_FIXED32 -> {
            if (pos[0] + 4 > bytes.length) {
              return null;
            }
            fields.add(new ProtoTree.Fixed32(field, MemorySegment.ofArray(bytes).get(ProtoWire.INT_LE, pos[0])));
            pos[0] += 4;
          }
          case ProtoWire.WIRE_TYPE_LENGTH_DELIMITED -> {
            int start = pos[0];
            long length = varint(bytes, pos);
            if (pos[0] < 0 || length > bytes.length - pos[0]) {
              return null;
            }
            int lengthBytes = pos[0] - start;
            byte[] body = java.util.Arrays.copyOfRange(bytes, pos[0], pos[0] + (int) length);
            pos[0] += (int) length;
            boolean redundant = lengthBytes != Varints.size(length);
            List<ProtoTree> nested = redundant || lengthBytes == 1 ? parse(body) : null;
            if (redundant && nested == null) {
              return null; // only protozero's nested messages have 4-byte sizes
            }
            fields.add(nested != null ? new ProtoTree.Nested(field, nested) : new ProtoTree.Bytes(field, body));
          }
          default -> {
            return null;
          }
        }
        if (pos[0] < 0) {
          return null;
        }
      }
      return fields;
    }

    /** Reads a varint at pos[0]; on truncation sets pos[0] to -1 and returns -1. */
    private static long varint(byte[] b, int[] pos) {
      long v = 0;
      for (int shift = 0, p = pos[0]; shift < 64 && p < b.length; shift += 7) {
        int x = b[p++] & 0xFF;
        v |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
          pos[0] = p;
          return v;
        }
      }
      pos[0] = -1;
      return -1;
    }

    static int countNested(List<ProtoTree> tree) {
      int n = 0;
      for (ProtoTree f : tree) {
        if (f instanceof ProtoTree.Nested nested) {
          n += 1 + countNested(nested.fields());
        }
      }
      return n;
    }
  }
}
