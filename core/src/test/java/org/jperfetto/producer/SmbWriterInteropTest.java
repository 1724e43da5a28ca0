package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors;
import com.google.protobuf.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.ChunkReadResult;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.UntrustedChunkReader;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.testing.Fixtures;
import org.junit.jupiter.api.Test;

/**
 * Replays the packets upstream v58's TraceWriter left in test-fixtures/interop/smb/smb_v58_full.bin
 * through our TraceWriter, re-encoding their nested messages with beginNested/endNested, and
 * compares chunk by chunk: the same packet counts, continue flags and used size, and the same bytes
 * (fragment size headers of 1 or 4 bytes, compacted nested sizes, where the writer cut a chunk
 * because a size field did not fit, the empty packet of an inflated count) for chunks without
 * pending patches. A packet whose unpatched sizes hide its structure ends a replay segment; the
 * next one starts at a chunk that begins with a whole packet.
 */
class SmbWriterInteropTest {
  private static final int PAGE = 4096;
  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final int CONTINUE_FLAGS = ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK
      | ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK;

  /** A chunk's header fields and its bytes from the payload start to the end of its last fragment. */
  record Chunk(int chunkId, int count, int flags, byte[] used, boolean dropMarker) {}

  /** Parses a chunk payload: where its counted fragments end, and whether one is a drop marker. */
  static Chunk parse(int chunkId, short packets, MemorySegment payload) {
    int count = ChunkHeader.packetCount(packets);
    long p = 0;
    boolean drop = false;
    for (int k = 0; k < count; k++) {
      long decoded = PacketFragments.decodeSize(payload, p, payload.byteSize());
      assertTrue(decoded >= 0, "bad fragment size in chunk " + chunkId);
      int size = PacketFragments.size(decoded);
      p += PacketFragments.headerBytes(decoded);
      if (size == PacketFragments.DROP_PACKET_MARKER) {
        drop = true;
        break;
      }
      p += size;
    }
    return new Chunk(chunkId, count, ChunkHeader.packetFlags(packets), payload.asSlice(0, p)
        .toArray(ValueLayout.JAVA_BYTE), drop);
  }

  static List<Chunk> upstreamChunks() throws IOException {
    Path file = Fixtures.interop("smb", "smb_v58_full.bin");
    MemorySegment smb = MemorySegment.ofArray(Files.readAllBytes(file));
    List<Chunk> chunks = new ArrayList<>();
    for (long page = 0; page < smb.byteSize(); page += PAGE) {
      long chunk = page + 8;
      int size = (PAGE - 8) & ~3;
      chunks.add(parse(smb.get(U32, chunk), smb.get(U16, chunk + 6),
          smb.asSlice(chunk + ChunkHeader.SIZE, size - ChunkHeader.SIZE)));
    }
    chunks.sort(Comparator.comparingInt(Chunk::chunkId));
    return chunks;
  }

  /** A whole packet and the indexes of the chunks holding its first and last fragments. */
  record Packet(byte[] data, int firstChunk, int lastChunk) {}

  /** Whole packets of the chunks, glued across chunk boundaries. */
  static List<Packet> packets(List<Chunk> chunks) {
    List<Packet> out = new ArrayList<>();
    ByteArrayOutputStream pending = null;
    int first = 0;
    for (int ci = 0; ci < chunks.size(); ci++) {
      Chunk c = chunks.get(ci);
      MemorySegment s = MemorySegment.ofArray(c.used());
      long p = 0;
      for (int k = 0; k < c.count() && p < s.byteSize(); k++) {
        long decoded = PacketFragments.decodeSize(s, p, s.byteSize());
        int size = PacketFragments.size(decoded);
        p += PacketFragments.headerBytes(decoded);
        if (size == PacketFragments.DROP_PACKET_MARKER) {
          return out;
        }
        boolean continued = k == 0 && (c.flags() & ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) != 0;
        boolean continues = k == c.count() - 1 && (c.flags() & ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) != 0;
        if (!continued) {
          pending = new ByteArrayOutputStream();
          first = ci;
        } else if (pending == null) {
          p += size; // the start of this packet is before the first chunk
          continue;
        }
        pending.write(c.used(), (int) p, size);
        p += size;
        if (!continues && size > 0) {
          out.add(new Packet(pending.toByteArray(), first, ci));
        }
      }
    }
    return out;
  }

  /**
   * Plans writing the fields of an encoded message again through our writer the way upstream's
   * writer produced them: a message-typed field whose length took 4 bytes (reserved, then
   * backfilled) or 1 byte (compacted) is opened with beginNested and its fields written one by one;
   * every other field is copied as it is. Returns false if the bytes do not parse.
   */
  private static boolean plan(List<Runnable> steps, ProtoWriter w, byte[] buf, int from, int to,
      Descriptors.Descriptor type) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(buf, from, to - from);
      while (!in.isAtEnd()) {
        int start = from + in.getTotalBytesRead();
        int tag = in.readTag();
        int field = WireFormat.getTagFieldNumber(tag);
        Descriptors.FieldDescriptor fd = type.findFieldByNumber(field);
        if (fd != null && fd.getJavaType() == Descriptors.FieldDescriptor.JavaType.MESSAGE
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          int lengthAt = from + in.getTotalBytesRead();
          int length = in.readRawVarint32();
          int prefix = from + in.getTotalBytesRead() - lengthAt;
          int body = from + in.getTotalBytesRead();
          int mark = steps.size();
          if ((prefix == 4 || prefix == 1) && length >= 0 && body + length <= to
              && planNested(steps, w, buf, field, body, body + length, fd.getMessageType())) {
            in.skipRawBytes(length);
            continue;
          }
          // A size upstream had still to patch when the SMB was copied holds stale bytes; the
          // message it opened then runs to the end of the enclosing one.
          steps.subList(mark, steps.size()).clear();
          int staleBody = lengthAt + 4;
          if (staleBody <= to && planNested(steps, w, buf, field, staleBody, to, fd.getMessageType())) {
            return true;
          }
          if (prefix != 4 && prefix != 1 && length >= 0 && body + length <= to) {
            steps.subList(mark, steps.size()).clear();
            in.skipRawBytes(length); // appended pre-encoded: copy as is
          } else {
            return false;
          }
        } else {
          in.skipField(tag);
        }
        int end = from + in.getTotalBytesRead();
        steps.add(() -> w.appendRawProtoBytes(buf, start, end - start));
      }
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private static boolean planNested(List<Runnable> steps, ProtoWriter w, byte[] buf, int field, int body,
      int end, Descriptors.Descriptor type) {
    steps.add(() -> w.beginNested(field));
    if (!plan(steps, w, buf, body, end, type)) {
      return false;
    }
    steps.add(w::endNested);
    return true;
  }

  @Test
  void ourWriterCutsUpstreamsPacketsIntoTheSameChunks() throws Exception {
    List<Chunk> theirs = upstreamChunks();
    int end = 0;
    while (!theirs.get(end).dropMarker()) {
      end++;
    }
    // The chunk with the drop marker and the one before (its packet may be cut) are left out.
    List<Chunk> replayed = theirs.subList(0, end);
    List<Packet> packets = packets(replayed);
    assertTrue(packets.size() > 10_000, "packets " + packets.size());

    // Replay in segments: each starts at a chunk that begins with a whole packet and ends before the
    // chunk where a packet starts that cannot be parsed again (one whose unpatched stale sizes hide
    // its structure); the chunks from there on would be cut where upstream's reservations fell.
    int compared = 0;
    int byteExact = 0;
    int segments = 0;
    int k = 0;
    while (k < packets.size()) {
      while (k < packets.size() && !startsChunk(replayed, packets, k)) {
        k++;
      }
      if (k >= packets.size()) {
        break;
      }
      int segmentStart = packets.get(k).firstChunk();
      List<Chunk> ours = new ArrayList<>();
      int stopChunk = replayed.size() - 1;
      try (Arena arena = Arena.ofConfined()) {
        TraceWriter writer = collectingWriter(arena, ours);
        for (; k < packets.size(); k++) {
          Packet packet = packets.get(k);
          List<Runnable> steps = new ArrayList<>();
          ProtoWriter w = writer.newTracePacket();
          if (!plan(steps, w, packet.data(), 0, packet.data().length, TracePacket.getDescriptor())) {
            stopChunk = packet.firstChunk();
            w.appendRawProtoBytes(packet.data(), 0, packet.data().length);
            k++;
            break;
          }
          steps.forEach(Runnable::run);
        }
        writer.flush();
      }
      segments++;
      for (int i = segmentStart; i < stopChunk; i++) {
        Chunk t = replayed.get(i);
        Chunk o = ours.get(i - segmentStart);
        String where = "chunk " + i + " (upstream id " + t.chunkId() + ")";
        assertEquals(t.count(), o.count(), "packet count of " + where);
        assertEquals(t.flags() & CONTINUE_FLAGS, o.flags() & CONTINUE_FLAGS, "flags of " + where);
        assertEquals(t.used().length, o.used().length, "used size of " + where);
        if (((t.flags() | o.flags()) & ChunkHeader.CHUNK_NEEDS_PATCHING) == 0) {
          assertArrayEquals(t.used(), o.used(), "bytes of " + where);
          byteExact++;
        }
        compared++;
      }
    }
    System.out.println("v58 replay: " + compared + " of " + replayed.size() + " chunks compared in "
        + segments + " segments, " + byteExact + " byte for byte");
    assertTrue(compared >= 20, "compared " + compared + " chunks");
    assertTrue(byteExact >= 10, "byte-exact chunks " + byteExact);
  }

  /** Whether packet k is the first fragment of its chunk. */
  private static boolean startsChunk(List<Chunk> chunks, List<Packet> packets, int k) {
    int first = packets.get(k).firstChunk();
    return (chunks.get(first).flags() & ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) == 0
        && (k == 0 || packets.get(k - 1).lastChunk() != first);
  }

  /** A writer into a fresh 64-page SMB whose committed chunks are parsed into out, in order. */
  private static TraceWriter collectingWriter(Arena arena, List<Chunk> out) {
    MemorySegment smb = arena.allocate(64 * PAGE, PAGE);
    UntrustedChunkReader reader = new UntrustedChunkReader(new SharedMemoryAbi(smb, PAGE));
    SharedMemoryArbiter[] arbiter = new SharedMemoryArbiter[1];
    CommitBatch[] spare = {new CommitBatch()};
    arbiter[0] = new SharedMemoryArbiter(new SharedMemoryAbi(smb, PAGE), () -> {
      CommitBatch b = arbiter[0].drainTo(spare[0]);
      for (int i = 0; i < b.moves; i++) {
        assertEquals(ChunkReadResult.OK, reader.acquireCommitted(b.movePage[i], b.moveChunk[i]));
        long off = reader.payloadOffset();
        out.add(parse(reader.chunkId(), smb.get(U16, off - 2), smb.asSlice(off, reader.payloadSize())));
        reader.releaseAsFree();
      }
      spare[0] = b;
    });
    TraceWriter writer = TraceWriter.create(arbiter[0], 1, BufferExhaustedPolicy.STALL);
    writer.continueSequence();
    return writer;
  }
}
