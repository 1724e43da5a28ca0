package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random commits (in order, swapped, scraped incomplete), patches and reads from several writers,
 * checked against a plain model: each writer's list of packets, cut into chunks the way a
 * TraceWriter cuts them. Whatever the buffer loses, what it returns must be the written bytes,
 * in each sequence's order, never twice, with every gap flagged; when nothing was lost,
 * everything comes out.
 */
class TraceBufferProperties {
  private static final int[] PAYLOADS = {1008, 2032, 4080};

  @Property(tries = 150)
  void readsMatchTheWrittenPackets(@ForAll long seed,
      @ForAll @Size(max = 120) List<@IntRange(min = 0, max = 99) Integer> ops,
      @ForAll boolean discard, @ForAll @IntRange(min = 2, max = 64) int pages) {
    collect(assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run(seed, ops, discard, pages * 4096L, 40)));
  }

  @Property(tries = 400)
  @Tag("stress")
  void readsMatchTheWrittenPacketsLong(@ForAll long seed,
      @ForAll @Size(max = 1500) List<@IntRange(min = 0, max = 99) Integer> ops,
      @ForAll boolean discard, @ForAll @IntRange(min = 1, max = 256) int pages) {
    collect(assertTimeoutPreemptively(Duration.ofSeconds(60), () -> run(seed, ops, discard, pages * 4096L, 300)));
  }

  /** Chunk as the writer produced it, with its patch (the 4 bytes withheld) if any. */
  record ModelChunk(int chunkId, byte[] payload, int numFragments, int flags, int patchOffset,
      byte[] patchData) {}

  /** One writer: its packets and the chunks they were cut into. */
  static final class Writer {
    final int producerId;
    final int writerId;
    final List<byte[]> packets = new ArrayList<>();
    final List<ModelChunk> chunks = new ArrayList<>();
    /** Index of the next chunk not yet committed, and ones committed ahead of it. */
    final List<Integer> pending = new ArrayList<>();
    final List<Integer> patchesToSend = new ArrayList<>();
    /** Index in packets of the last packet read, -1 if none. */
    int lastRead = -1;
    /** Packets flagged previous-packet-dropped although nothing before them was missed. */
    int spuriousDrops;

    Writer(int producerId, int writerId) {
      this.producerId = producerId;
      this.writerId = writerId;
    }
  }

  /** What kinds of runs were tried (shown in the jqwik report). */
  private static void collect(TraceBufferStats s) {
    Statistics.label("lossless").collect(s.chunksOverwritten() == 0 && s.chunksDiscarded() == 0);
    Statistics.label("wrapped").collect(s.writeWrapCount() > 0);
    Statistics.label("patched").collect(s.patchesSucceeded() > 0);
    Statistics.label("glued").collect(s.readaheadsSucceeded() > 0);
  }

  private static TraceBufferStats run(long seed, List<Integer> ops, boolean discard, long size,
      int packetsPerWriter) {
    Random rnd = new Random(seed);
    List<Writer> writers = new ArrayList<>();
    int nWriters = 1 + rnd.nextInt(4);
    for (int i = 0; i < nWriters; i++) {
      Writer w = new Writer(1 + i % 2, 1 + i);
      int firstChunkId = rnd.nextInt(4) == 0 ? -3 - rnd.nextInt(5) : rnd.nextInt(3);
      build(w, rnd, PAYLOADS[rnd.nextInt(PAYLOADS.length)], firstChunkId, packetsPerWriter);
      writers.add(w);
    }
    try (TraceBuffer tb = TraceBuffer.create(size, discard ? OverwritePolicy.DISCARD : OverwritePolicy.RING_BUFFER);
        Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(8192);
      BufferedPacket packet = new BufferedPacket();
      for (int op : ops) {
        Writer w = writers.get(op % writers.size());
        if (op < 60) {
          int pick = op < 8 ? Math.min(w.pending.size() - 1, 1 + op % 3) : 0; // sometimes out of order
          if (!w.pending.isEmpty()) {
            commit(tb, smb, w, w.pending.remove(Math.max(pick, 0)), true);
          }
        } else if (op < 68) {
          if (!w.pending.isEmpty()) {
            commit(tb, smb, w, w.pending.get(0), false); // scraped while being written
          }
        } else if (op < 80) {
          sendOnePatch(tb, w, op < 72);
        } else {
          readAndCheck(tb, packet, writers);
        }
      }
      for (Writer w : writers) {
        while (!w.pending.isEmpty()) {
          commit(tb, smb, w, w.pending.remove(0), true);
        }
        while (!w.patchesToSend.isEmpty()) {
          sendOnePatch(tb, w, false);
        }
      }
      readAndCheck(tb, packet, writers);

      TraceBufferStats s = tb.stats();
      assertEquals(0, s.abiViolations(), "well-formed chunks only");
      assertTrue(s.bytesRead() <= s.bytesWritten());
      assertTrue(s.chunksRead() <= s.chunksWritten());
      boolean lossless = s.chunksOverwritten() == 0 && s.chunksDiscarded() == 0 && s.patchesFailed() == 0;
      if (lossless) {
        for (Writer w : writers) {
          int last = lastNonEmpty(w);
          assertEquals(last, w.lastRead, "everything of writer " + w.writerId + " comes out: " + s);
          if (s.writeWrapCount() == 0) {
            assertEquals(0, w.spuriousDrops, "no loss, no wrap: no packet but the first is flagged");
          }
        }
      }
      return s;
    }
  }

  private static int lastNonEmpty(Writer w) {
    for (int i = w.packets.size() - 1; i >= 0; i--) {
      if (w.packets.get(i).length > 0) {
        return i;
      }
    }
    return -1;
  }

  private static void commit(TraceBuffer tb, MemorySegment smb, Writer w, int index, boolean complete) {
    ModelChunk c = w.chunks.get(index);
    MemorySegment.copy(MemorySegment.ofArray(c.payload()), 0, smb, 16, c.payload().length);
    tb.copyChunkUntrusted(w.producerId, 1000 + w.producerId, 7, w.writerId, c.chunkId(),
        c.numFragments(), c.flags(), complete, smb, 16, c.payload().length);
    if (complete && c.patchData() != null && !w.patchesToSend.contains(index)) {
      w.patchesToSend.add(index);
    }
  }

  /** Sends the oldest outstanding patch, in one batch or (split) followed by an empty one. */
  private static void sendOnePatch(TraceBuffer tb, Writer w, boolean split) {
    if (w.patchesToSend.isEmpty()) {
      return;
    }
    ModelChunk c = w.chunks.get(w.patchesToSend.remove(0));
    List<Patch> patch = List.of(new Patch(c.patchOffset(), c.patchData()));
    if (split && tb.tryPatchChunkContents(w.producerId, w.writerId, c.chunkId(), patch, true)) {
      tb.tryPatchChunkContents(w.producerId, w.writerId, c.chunkId(), List.of(), false);
    } else {
      tb.tryPatchChunkContents(w.producerId, w.writerId, c.chunkId(), patch, false);
    }
  }

  private static void readAndCheck(TraceBuffer tb, BufferedPacket p, List<Writer> writers) {
    tb.beginRead();
    while (tb.readNextTracePacket(p)) {
      Writer w = writers.stream()
          .filter(x -> x.producerId == p.producerId() && x.writerId == p.writerId())
          .findFirst().orElseThrow(() -> new AssertionError("unknown sequence " + p));
      byte[] data = p.toByteArray();
      assertTrue(data.length >= 4, "empty packets are never returned");
      int index = ByteBuffer.wrap(data).getInt();
      assertTrue(index > w.lastRead && index < w.packets.size(),
          "order: packet " + index + " after " + w.lastRead + " on writer " + w.writerId);
      assertArrayEquals(w.packets.get(index), data, "content of packet " + index);
      boolean gap = false;
      for (int i = w.lastRead + 1; i < index; i++) {
        gap |= w.packets.get(i).length > 0;
      }
      if (gap) {
        assertTrue(p.previousPacketDropped(), "gap before packet " + index + " must be flagged");
      } else if (w.lastRead >= 0 && p.previousPacketDropped()) {
        w.spuriousDrops++;
      }
      assertEquals(1000 + w.producerId, p.uid());
      w.lastRead = index;
    }
    assertEquals(0, p.sliceCount());
  }

  /** Cuts the writer's packets into chunks of payloadSize, as a TraceWriter does. */
  private static void build(Writer w, Random rnd, int payloadSize, int firstChunkId, int count) {
    for (int i = 0; i < count; i++) {
      int kind = rnd.nextInt(20);
      int len = kind == 0 ? 0 : kind < 3 ? 1000 + rnd.nextInt(9000) : 4 + rnd.nextInt(200);
      byte[] b = new byte[len];
      rnd.nextBytes(b);
      if (len > 0) {
        ByteBuffer.wrap(b).putInt(i); // the packet's index, so a reader can tell which it is
      }
      w.packets.add(b);
    }
    ChunkCutter cut = new ChunkCutter(w, rnd, payloadSize, firstChunkId);
    for (byte[] packet : w.packets) {
      cut.add(packet);
    }
    cut.close(false);
    for (int i = 0; i < w.chunks.size(); i++) {
      w.pending.add(i);
    }
  }

  /** Writes fragments into fixed-size chunks; a packet that does not fit continues in the next. */
  private static final class ChunkCutter {
    private final Writer w;
    private final Random rnd;
    private final int payloadSize;
    private int chunkId;
    private ByteArrayOutputStream cur = new ByteArrayOutputStream();
    private int fragments;
    private int flags;
    private int lastFragmentData = -1;
    private int lastFragmentLength;

    ChunkCutter(Writer w, Random rnd, int payloadSize, int firstChunkId) {
      this.w = w;
      this.rnd = rnd;
      this.payloadSize = payloadSize;
      this.chunkId = firstChunkId;
    }

    void add(byte[] packet) {
      int off = 0;
      if (payloadSize - cur.size() < 5 && fragments > 0) {
        close(false);
      }
      while (true) {
        int room = payloadSize - cur.size();
        int rest = packet.length - off;
        if (rest + 4 <= room) {
          fragment(packet, off, rest);
          return;
        }
        int part = room - 4;
        fragment(packet, off, part);
        off += part;
        close(true);
        flags |= TestChunk.FROM_PREV;
      }
    }

    private void fragment(byte[] packet, int off, int len) {
      cur.write((len & 0x7F) | 0x80);
      cur.write(((len >>> 7) & 0x7F) | 0x80);
      cur.write(((len >>> 14) & 0x7F) | 0x80);
      cur.write((len >>> 21) & 0x7F);
      lastFragmentData = cur.size();
      lastFragmentLength = len;
      cur.write(packet, off, len);
      fragments++;
    }

    void close(boolean continues) {
      if (fragments == 0) {
        return;
      }
      byte[] payload = Arrays.copyOf(cur.toByteArray(), payloadSize);
      int f = flags | (continues ? TestChunk.ON_NEXT : 0);
      int patchOffset = -1;
      byte[] patchData = null;
      if (continues && lastFragmentLength >= 4 && rnd.nextInt(4) == 0) {
        // A size field inside the spanning packet is only known later: withhold 4 bytes.
        patchOffset = lastFragmentData + rnd.nextInt(lastFragmentLength - 3);
        patchData = Arrays.copyOfRange(payload, patchOffset, patchOffset + 4);
        Arrays.fill(payload, patchOffset, patchOffset + 4, (byte) 0);
        f |= TestChunk.PATCH;
      }
      w.chunks.add(new ModelChunk(chunkId++, payload, fragments, f, patchOffset, patchData));
      cur = new ByteArrayOutputStream();
      fragments = 0;
      flags = 0;
    }
  }
}
