package org.jperfetto.service.buffer;

import org.jperfetto.abi.ChunkHeader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.jperfetto.testing.Fixtures;

/**
 * Replays the SMBs written by upstream's C++ TraceWriter (test-fixtures/interop/smb): every chunk is
 * copied as the service would, then read back. Expectations are the ones the capture's README
 * reports from an independent decoder.
 */
@Timeout(30)
class TraceBufferInteropTest {
  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final int PAGE = 4096;
  private static final int PRODUCER = 1;

  record SmbChunk(int page, int chunkId, int writerId, int count, int flags) {}

  private static MemorySegment load(Arena arena, String name) throws IOException {
    Path p = Fixtures.interop("smb", name);
    // A missing capture fails, as in every other interop test: skipping would pass with no check.
    assertTrue(Files.isReadable(p), "capture not found: " + p);
    byte[] bytes = Files.readAllBytes(p);
    MemorySegment smb = arena.allocate(bytes.length);
    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, smb, 0, bytes.length);
    return smb;
  }

  /** Chunk headers of the SMB's pages: all Div1 (one chunk per page), chunk Complete. */
  private static List<SmbChunk> chunks(MemorySegment smb) {
    List<SmbChunk> out = new ArrayList<>();
    for (int page = 0; page < smb.byteSize() / PAGE; page++) {
      long base = (long) page * PAGE;
      int header = smb.get(U32, base);
      assertEquals(1, (header >>> 28) & 0x7, "layout Div1 on page " + page);
      assertEquals(3, header & 0x3, "chunk Complete on page " + page);
      int packets = Short.toUnsignedInt(smb.get(U16, base + 14));
      out.add(new SmbChunk(page, smb.get(U32, base + 8), Short.toUnsignedInt(smb.get(U16, base + 12)),
          packets & 0x3FF, packets >>> 10));
    }
    return out;
  }

  @ParameterizedTest
  @CsvSource({
    "smb_v58_full.bin, 61, 124, 16610, 36, 16564, 19, 7847, 7557, 15434",
    "smb_v14_full.bin, 307, 370, 9388, 22, 9344, 0, 4429, 21662, 26110"})
  void upstreamWriterChunksReadBackAsTheReferenceDecoderSaw(String file, int firstId, int lastId,
      int fragments, int needPatching, int wholePackets, int emptyPackets, int sliceBegins,
      long firstI, long lastI) throws IOException {
    try (Arena arena = Arena.ofConfined(); TraceBuffer tb = TraceBuffer.create(1 << 20, OverwritePolicy.RING_BUFFER)) {
      MemorySegment smb = load(arena, file);
      List<SmbChunk> chunks = chunks(smb);
      assertEquals(fragments, chunks.stream().mapToInt(SmbChunk::count).sum());
      TreeMap<Integer, SmbChunk> byId = new TreeMap<>();
      for (SmbChunk c : chunks) {
        byId.put(c.chunkId(), c);
      }
      assertEquals(firstId, byId.firstKey());
      assertEquals(lastId, byId.lastKey());
      // Page order, as a service copying the whole SMB would: ids are not sorted there.
      for (SmbChunk c : chunks) {
        tb.copyChunkUntrusted(PRODUCER, 1000, 77, c.writerId(), c.chunkId(), c.count(), c.flags(),
            true, smb, (long) c.page() * PAGE + 16, PAGE - 16);
      }
      List<PacketReader.Read> read = new ArrayList<>(PacketReader.readAll(tb));
      SmbChunk firstUnpatched = byId.values().stream()
          .filter(c -> (c.flags() & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0).findFirst().orElseThrow();
      assertTrue(read.size() > 0 || firstUnpatched.chunkId() == firstId,
          "packets before the first unpatched chunk come out");
      assertTrue(read.stream().allMatch(r -> ProtoCheck.wellFormed(r.data())),
          "nothing from an unpatched chunk is handed out");
      // The patches never came: let the producer's "no more patches" through, chunk by chunk.
      int flagged = 0;
      for (SmbChunk c : byId.values()) {
        if ((c.flags() & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0) {
          flagged++;
          assertTrue(tb.tryPatchChunkContents(PRODUCER, c.writerId(), c.chunkId(), List.of(), false));
          if (c == firstUnpatched) {
            read.addAll(PacketReader.readAll(tb));
          }
        }
      }
      read.addAll(PacketReader.readAll(tb));
      assertEquals(needPatching, flagged);

      TraceBufferStats s = tb.stats();
      assertEquals(0, s.abiViolations(), s.toString());
      assertEquals(1, s.traceWriterPacketLoss(), "the newest chunk ends with the drop marker");
      assertEquals(64, s.chunksWritten());
      // The reference decoder counts empty packets (a size-0 fragment) as packets; the buffer,
      // like upstream's, skips them.
      assertEquals(wholePackets - emptyPackets, read.size(), s.toString());
      // Only the spanning packets whose patches never came can be malformed: at most one per
      // chunk that needed patching.
      long malformed = read.stream().filter(r -> !ProtoCheck.wellFormed(r.data())).count();
      assertTrue(malformed > 0 && malformed <= needPatching, "malformed=" + malformed);

      List<Long> is = new ArrayList<>();
      for (PacketReader.Read r : read) {
        Long i = ProtoCheck.sliceBeginDebugInt(r.data());
        if (i != null) {
          is.add(i);
        }
      }
      assertEquals(sliceBegins, is.size());
      assertEquals(firstI, is.get(0));
      assertEquals(lastI, is.get(is.size() - 1));
      for (int k = 1; k < is.size(); k++) {
        long step = is.get(k) - is.get(k - 1);
        assertTrue(step == 1 || step == 2, "i rises by 1 (2 past an unpatched packet): " + is.get(k - 1)
            + " -> " + is.get(k));
      }
    }
  }

  /** Just enough protobuf to check a packet and find a slice-begin's debug int. */
  static final class ProtoCheck {
    private ProtoCheck() {}

    /** Every field of the message has a valid tag, wire type and length, ending exactly. */
    static boolean wellFormed(byte[] b) {
      return fields(b, 0, b.length, null);
    }

    interface FieldVisitor {
      void field(int number, int wireType, long value, int start, int end);
    }

    static boolean fields(byte[] b, int from, int to, FieldVisitor v) {
      int[] pos = {from};
      while (pos[0] < to) {
        long tag = varint(b, pos, to);
        if (tag < 0 || (tag >>> 3) == 0) {
          return false;
        }
        int wt = (int) (tag & 7);
        int number = (int) (tag >>> 3);
        switch (wt) {
          case 0 -> {
            long val = varint(b, pos, to);
            if (val == -1 && pos[0] < 0) {
              return false;
            }
            if (pos[0] < 0) {
              return false;
            }
            if (v != null) {
              v.field(number, wt, val, 0, 0);
            }
          }
          case 1, 5 -> {
            pos[0] += wt == 1 ? 8 : 4;
            if (pos[0] > to) {
              return false;
            }
          }
          case 2 -> {
            long len = varint(b, pos, to);
            if (pos[0] < 0 || len < 0 || len > to - pos[0]) {
              return false;
            }
            int start = pos[0];
            pos[0] += (int) len;
            if (v != null) {
              v.field(number, wt, len, start, pos[0]);
            }
          }
          default -> {
            return false;
          }
        }
      }
      return pos[0] == to;
    }

    /** Reads a varint; on a bad one sets pos[0] to -1 and returns -1. */
    static long varint(byte[] b, int[] pos, int to) {
      long value = 0;
      for (int shift = 0; shift < 64 && pos[0] < to; shift += 7) {
        int x = b[pos[0]++] & 0xFF;
        value |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
          return value;
        }
      }
      pos[0] = -1;
      return -1;
    }

    /**
     * TracePacket.track_event (11) of type SLICE_BEGIN (TrackEvent.type 9 = 1): the int_value (4)
     * of its first debug annotation (TrackEvent.debug_annotations 4). Null if not that.
     */
    static Long sliceBeginDebugInt(byte[] packet) {
      int[] te = {-1, -1};
      if (!fields(packet, 0, packet.length, (n, wt, val, s, e) -> {
        if (n == 11 && wt == 2) {
          te[0] = s;
          te[1] = e;
        }
      }) || te[0] < 0) {
        return null;
      }
      long[] type = {0};
      int[] ann = {-1, -1};
      fields(packet, te[0], te[1], (n, wt, val, s, e) -> {
        if (n == 9 && wt == 0) {
          type[0] = val;
        } else if (n == 4 && wt == 2 && ann[0] < 0) {
          ann[0] = s;
          ann[1] = e;
        }
      });
      if (type[0] != 1 || ann[0] < 0) {
        return null;
      }
      Long[] out = {null};
      fields(packet, ann[0], ann[1], (n, wt, val, s, e) -> {
        if (n == 4 && wt == 0) {
          out[0] = val;
        }
      });
      return out[0];
    }
  }
}
