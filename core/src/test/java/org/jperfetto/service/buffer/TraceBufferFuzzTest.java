package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.wire.Varints;

/**
 * Coverage-guided fuzzing of {@link TraceBuffer} (docs/fuzzing.md): the input is a program of
 * chunk copies, patches and reads, interleaved, on a small buffer of either policy.
 *
 * <p>Copies are honest (fragments a writer would lay out, each one's bytes tagged with a serial,
 * chunk ids next, repeated, skipped ahead or anywhere, re-commits of a chunk that only add
 * fragments) or raw (any bytes, any header). Patches are honest (rewrite a size field with its own
 * value) or raw. Nothing may throw. Every packet read names a sequence that was written, with the
 * uid and pid given for it, and its slices lie in the buffer; on a sequence that saw only honest
 * copies and patches, every slice is a fragment written on that sequence, byte for byte, and none
 * comes out twice.
 */
class TraceBufferFuzzTest {
  private static final int PRODUCERS = 3;
  private static final int WRITERS = 3;

  @FuzzTest
  void operations(FuzzedDataProvider data) {
    long size = TraceBuffer.PAGE_SIZE * data.consumeInt(1, 6);
    OverwritePolicy policy = data.consumeBoolean() ? OverwritePolicy.RING_BUFFER : OverwritePolicy.DISCARD;
    Model model = new Model();
    BufferedPacket packet = new BufferedPacket();
    try (TraceBuffer buffer = TraceBuffer.create(size, policy)) {
      for (int op = 0; op < 200 && data.remainingBytes() > 0; op++) {
        switch (data.consumeInt(0, 5)) {
          case 0, 1 -> honestCopy(data, buffer, model);
          case 2 -> rawCopy(data, buffer, model);
          case 3 -> patch(data, buffer, model);
          default -> read(buffer, packet, model, data.consumeBoolean(), data.consumeInt(1, 16));
        }
      }
      read(buffer, packet, model, true, Integer.MAX_VALUE);
    }
  }

  /** What the fuzz program wrote, to judge what comes out. */
  private static final class Model {
    /** Fragment bytes by serial, for sequences still tracked. */
    final Map<Integer, byte[]> fragments = new HashMap<>();
    final Map<Integer, Integer> sequenceOfSerial = new HashMap<>();
    final Set<Integer> returned = new HashSet<>();
    /** Chunks of honest copies by {seq, chunk id}: their fragments and payload size. */
    final Map<Long, Chunk> chunks = new HashMap<>();
    final Map<Integer, Integer> lastChunkId = new HashMap<>();
    final Set<Integer> untracked = new HashSet<>();
    final Set<Integer> written = new HashSet<>();
    int nextSerial = 1;
  }

  private record Chunk(List<byte[]> fragments, List<Boolean> compact, int payloadSize) {}

  private static int seq(int producer, int writer) {
    return producer << 16 | writer;
  }

  private static long key(int seq, int chunkId) {
    return (long) seq << 32 | Integer.toUnsignedLong(chunkId);
  }

  private static int chunkId(FuzzedDataProvider data, Model model, int seq) {
    int last = model.lastChunkId.getOrDefault(seq, -1);
    return switch (data.consumeInt(0, 4)) {
      case 0, 1 -> last + 1;
      case 2 -> last;
      case 3 -> last + data.consumeInt(-3, 3);
      default -> {
        int id = data.consumeInt();
        if (Math.abs((long) id - last) > 1 << 20) {
          // No writer jumps that far; wrap-around order (half the id space) is then ambiguous.
          model.untracked.add(seq);
        }
        yield id;
      }
    };
  }

  private static void honestCopy(FuzzedDataProvider data, TraceBuffer buffer, Model model) {
    int producer = data.consumeInt(0, PRODUCERS - 1);
    int writer = data.consumeInt(1, WRITERS);
    int seq = seq(producer, writer);
    int chunkId = chunkId(data, model, seq);
    Chunk chunk = model.chunks.get(key(seq, chunkId));
    List<byte[]> fragments = chunk == null ? new ArrayList<>() : new ArrayList<>(chunk.fragments());
    List<Boolean> compact = chunk == null ? new ArrayList<>() : new ArrayList<>(chunk.compact());
    int payloadSize = chunk == null ? data.consumeInt(0, 600) : chunk.payloadSize();
    int used = encodedSize(fragments, compact);
    for (int i = data.consumeInt(0, 4); i > 0; i--) {
      int length = data.consumeBoolean() ? 0 : data.consumeInt(4, 80);
      boolean small = length <= Varints.MAX_ONE_BYTE && data.consumeBoolean();
      if (used + (small ? 1 : 4) + length > payloadSize) {
        break;
      }
      byte[] bytes = new byte[length];
      if (length > 0) {
        int serial = model.nextSerial++;
        ByteBuffer.wrap(bytes).putInt(serial);
        for (int b = 4; b < length; b++) {
          bytes[b] = (byte) (serial * 31 + b);
        }
        model.fragments.put(serial, bytes);
        model.sequenceOfSerial.put(serial, seq);
      }
      fragments.add(bytes);
      compact.add(small);
      used += (small ? 1 : 4) + length;
    }
    model.chunks.put(key(seq, chunkId), new Chunk(fragments, compact, payloadSize));
    model.lastChunkId.put(seq, chunkId);
    model.written.add(seq);

    MemorySegment payload = MemorySegment.ofArray(encode(fragments, compact, payloadSize));
    int flags = data.consumeInt(0, ChunkHeader.DEFINED_FLAGS_MASK);
    buffer.copyChunkUntrusted(producer, 1000 + producer, 100 + producer, writer, chunkId, fragments.size(),
        flags, data.consumeBoolean(), payload, 0, payloadSize);
  }

  private static void rawCopy(FuzzedDataProvider data, TraceBuffer buffer, Model model) {
    int producer = data.consumeInt(0, PRODUCERS - 1);
    int writer = data.consumeInt(1, WRITERS);
    int seq = seq(producer, writer);
    int chunkId = chunkId(data, model, seq);
    int numFragments = data.consumeInt(0, ChunkHeader.MAX_PACKET_COUNT);
    int flags = data.consumeInt(0, ChunkHeader.PACKET_FLAGS_MASK);
    boolean complete = data.consumeBoolean();
    byte[] bytes = data.consumeBytes(data.consumeInt(0, 2048));
    model.untracked.add(seq);
    model.written.add(seq);
    model.lastChunkId.put(seq, chunkId);
    buffer.copyChunkUntrusted(producer, 1000 + producer, 100 + producer, writer, chunkId, numFragments,
        flags, complete, MemorySegment.ofArray(bytes), 0, bytes.length);
  }

  private static void patch(FuzzedDataProvider data, TraceBuffer buffer, Model model) {
    int producer = data.consumeInt(0, PRODUCERS - 1);
    int writer = data.consumeInt(1, WRITERS);
    int seq = seq(producer, writer);
    int chunkId = chunkId(data, model, seq);
    boolean otherPatchesPending = data.consumeBoolean();
    List<Patch> patches = new ArrayList<>();
    Chunk chunk = model.chunks.get(key(seq, chunkId));
    if (chunk != null && !model.untracked.contains(seq) && data.consumeBoolean()) {
      // Honest: rewrite some 4-byte size fields with the value they hold.
      int offset = 0;
      for (int i = 0; i < chunk.fragments().size(); i++) {
        int length = chunk.fragments().get(i).length;
        if (!chunk.compact().get(i) && data.consumeBoolean()) {
          byte[] field = new byte[4];
          Varints.writeRedundant(MemorySegment.ofArray(field), 0, length);
          patches.add(new Patch(offset, field));
        }
        offset += (chunk.compact().get(i) ? 1 : 4) + length;
      }
    } else {
      for (int i = data.consumeInt(0, 3); i > 0; i--) {
        patches.add(new Patch(data.consumeLong(-8, 700), data.consumeBytes(data.consumeInt(0, 6))));
      }
      if (!patches.isEmpty()) {
        model.untracked.add(seq); // may rewrite fragment sizes or bytes
      }
    }
    buffer.tryPatchChunkContents(producer, writer, chunkId, patches, otherPatchesPending);
  }

  private static void read(TraceBuffer buffer, BufferedPacket packet, Model model, boolean begin, int max) {
    if (begin) {
      buffer.beginRead();
    }
    for (int i = 0; i < max && buffer.readNextTracePacket(packet); i++) {
      check(packet, model);
    }
  }

  private static void check(BufferedPacket packet, Model model) {
    int seq = seq(packet.producerId(), packet.writerId());
    assertTrue(model.written.contains(seq), () -> "packet of a sequence never written: " + packet);
    assertEquals(1000 + packet.producerId(), packet.uid(), "uid");
    assertEquals(100 + packet.producerId(), packet.pid(), "pid");
    MemorySegment segment = packet.segment();
    assertNotNull(segment);
    long total = 0;
    for (int s = 0; s < packet.sliceCount(); s++) {
      long offset = packet.sliceOffset(s);
      int length = packet.sliceLength(s);
      assertTrue(offset >= 0 && length >= 0 && offset + length <= segment.byteSize(), "slice out of buffer");
      total += length;
      if (model.untracked.contains(seq)) {
        continue;
      }
      byte[] bytes = segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
      assertTrue(length >= 4, () -> "slice too short for a written fragment: " + length + " in " + packet);
      int serial = ByteBuffer.wrap(bytes).getInt();
      byte[] written = model.fragments.get(serial);
      assertNotNull(written, () -> "slice is no fragment written: serial " + serial + " in " + packet);
      assertEquals(seq, model.sequenceOfSerial.get(serial), "fragment read on another sequence");
      assertArrayEquals(written, bytes, "fragment bytes changed");
      assertTrue(model.returned.add(serial), () -> "fragment " + serial + " read twice, in " + packet);
    }
    assertEquals(total, packet.size(), "packet size");
  }

  private static int encodedSize(List<byte[]> fragments, List<Boolean> compact) {
    int n = 0;
    for (int i = 0; i < fragments.size(); i++) {
      n += (compact.get(i) ? 1 : 4) + fragments.get(i).length;
    }
    return n;
  }

  private static byte[] encode(List<byte[]> fragments, List<Boolean> compact, int payloadSize) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < fragments.size(); i++) {
      byte[] f = fragments.get(i);
      if (compact.get(i)) {
        out.write(f.length);
      } else {
        byte[] field = new byte[4];
        Varints.writeRedundant(MemorySegment.ofArray(field), 0, f.length);
        out.writeBytes(field);
      }
      out.writeBytes(f);
    }
    byte[] payload = new byte[payloadSize];
    byte[] used = out.toByteArray();
    System.arraycopy(used, 0, payload, 0, used.length);
    return payload;
  }
}
