package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The four properties of issue 3. Each has a short default run; the long ones are tagged stress. */
class SmbProperties {
  private static final PageLayout[] DIVS = {
      PageLayout.DIV1, PageLayout.DIV2, PageLayout.DIV4, PageLayout.DIV7, PageLayout.DIV14};

  // (1) Geometry ----------------------------------------------------------------------------------

  @Property
  void chunksLieInsideThePageAlignedAndDisjoint(@ForAll @IntRange(min = 1, max = 16) int pages4k,
      @ForAll @IntRange(min = 0, max = 4) int div) {
    int pageSize = pages4k * 4096;
    PageLayout layout = DIVS[div];
    int size = layout.chunkSize(pageSize);
    assertTrue(size >= ChunkHeader.SIZE && size <= 0xFFFF);
    assertEquals(0, size % 4);
    int prevEnd = PageHeader.SIZE;
    for (int c = 0; c < layout.numChunks(); c++) {
      int begin = layout.chunkOffsetInPage(pageSize, c);
      assertEquals(0, begin % 4, "4-aligned");
      assertTrue(begin >= prevEnd, "no overlap with the previous chunk or the page header");
      prevEnd = begin + size;
      assertTrue(prevEnd <= pageSize, "inside the page");
    }
    assertTrue(pageSize - prevEnd < 4 * layout.numChunks(), "at most 3 bytes lost per chunk");
  }

  // (2) Interleavings against a model -------------------------------------------------------------

  /** One producer or service step: op, page, chunk, layout/handle selector. */
  record Op(int kind, int page, int chunk, int arg) {}

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Op> op = Combinators.combine(Arbitraries.integers().between(0, 6), Arbitraries.integers().between(0, 1),
        Arbitraries.integers().between(0, 14), Arbitraries.integers().between(0, 99)).as(Op::new);
    return op.list().ofMaxSize(200);
  }

  @Property(tries = 300)
  void noChunkHasTwoOwnersAndNoCompleteChunkIsLost(@ForAll("ops") List<Op> ops) {
    runModel(ops);
  }

  @Property(tries = 5000)
  @Tag("stress")
  void noChunkHasTwoOwnersAndNoCompleteChunkIsLostLong(@ForAll("ops") List<Op> ops) {
    runModel(ops);
  }

  private static void runModel(List<Op> ops) {
    try (Arena arena = Arena.ofConfined()) {
      SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(2 * 4096, 4096), 4096);
      int[] layout = new int[2];
      int[][] state = new int[2][14];
      Map<Long, Integer> idOf = new HashMap<>();
      List<Long> writing = new ArrayList<>();
      List<Long> reading = new ArrayList<>();
      Set<Integer> completed = new HashSet<>();
      Set<Integer> read = new HashSet<>();
      int nextId = 1;
      for (Op op : ops) {
        int p = op.page();
        int c = op.chunk();
        int n = PageLayout.NUM_CHUNKS_BY_BITS[layout[p]];
        switch (op.kind()) {
          case 0 -> { // producer partitions
            PageLayout l = DIVS[op.arg() % DIVS.length];
            boolean ok = abi.tryPartitionPage(p, l);
            assertEquals(layout[p] == 0, ok);
            if (ok) {
              layout[p] = l.bits();
            }
          }
          case 1 -> { // producer acquires for writing
            long h = abi.tryAcquireChunkForWriting(p, c, nextId, 1, (short) 0);
            boolean expected = c < n && state[p][c] == 0;
            assertEquals(expected, h != ChunkHandle.INVALID, "acquire " + op);
            if (expected) {
              state[p][c] = 1;
              idOf.put(h, nextId++);
              writing.add(h);
            }
          }
          case 2 -> { // producer completes one of its chunks
            if (!writing.isEmpty()) {
              long h = writing.remove(op.arg() % writing.size());
              assertEquals(ChunkHandle.page(h), abi.releaseChunkAsComplete(h));
              state[ChunkHandle.page(h)][ChunkHandle.chunkIndex(h)] = 3;
              completed.add(idOf.get(h));
            }
          }
          case 3 -> { // service acquires for reading
            long h = abi.tryAcquireChunkForReading(p, c);
            boolean expected = c < n && state[p][c] == 3;
            assertEquals(expected, h != ChunkHandle.INVALID, "read " + op);
            if (expected) {
              state[p][c] = 2;
              int id = abi.chunkId(h);
              assertEquals(idOf.get(h), id, "header written by the owner");
              assertTrue(completed.remove(id));
              assertTrue(read.add(id), "read twice: " + id);
              reading.add(h);
            }
          }
          case 4 -> { // service frees
            if (!reading.isEmpty()) {
              long h = reading.remove(op.arg() % reading.size());
              int page = ChunkHandle.page(h);
              assertEquals(page, abi.releaseChunkAsFree(h));
              state[page][ChunkHandle.chunkIndex(h)] = 0;
              if (allFree(state[page])) {
                layout[page] = 0;
              }
            }
          }
          case 5 -> { // forbidden: free a chunk still being written
            if (!writing.isEmpty()) {
              long h = writing.get(op.arg() % writing.size());
              assertEquals(SharedMemoryAbi.INVALID_PAGE, abi.releaseChunkAsFree(h));
              abi.segment().set(ValueLayout.JAVA_INT, abi.chunkOffset(h), idOf.get(h)); // restore the cleared id
            }
          }
          default -> { // forbidden: complete a chunk being read
            if (!reading.isEmpty()) {
              assertEquals(SharedMemoryAbi.INVALID_PAGE,
                  abi.releaseChunkAsComplete(reading.get(op.arg() % reading.size())));
            }
          }
        }
        for (int page = 0; page < 2; page++) {
          assertEquals(modelBitmap(layout[page], state[page]), abi.headerBitmap(page), "after " + op);
        }
      }
      // Drain: every chunk acquired is eventually read exactly once.
      for (long h : writing) {
        abi.releaseChunkAsComplete(h);
        completed.add(idOf.get(h));
      }
      for (int page = 0; page < 2; page++) {
        for (int c = 0; c < 14; c++) {
          long h = abi.tryAcquireChunkForReading(page, c);
          if (h != ChunkHandle.INVALID) {
            int id = abi.chunkId(h);
            assertTrue(completed.remove(id), "unexpected chunk " + id);
            assertTrue(read.add(id));
            abi.releaseChunkAsFree(h);
          }
        }
      }
      assertEquals(Set.of(), completed, "complete chunks lost");
      assertEquals(nextId - 1, read.size());
    }
  }

  private static boolean allFree(int[] states) {
    for (int s : states) {
      if (s != 0) {
        return false;
      }
    }
    return true;
  }

  private static int modelBitmap(int layoutBits, int[] states) {
    int b = layoutBits << PageHeader.LAYOUT_SHIFT;
    for (int c = 0; c < states.length; c++) {
      b |= states[c] << (2 * c);
    }
    return b;
  }

  // (3) Fragmented packets reassemble byte-exact --------------------------------------------------

  @Property(tries = 150)
  void packetsSplitOverChunksReassembleByteExact(@ForAll @IntRange(min = 0, max = 1) int pageSizeIdx,
      @ForAll @IntRange(min = 0, max = 4) int div,
      @ForAll @Size(max = 40) List<@DoubleRange(min = 0, max = 3.5) Double> sizesInChunks,
      @ForAll long seed) {
    roundTrip(pageSizeIdx == 0 ? 4096 : 8192, DIVS[div], sizesInChunks, seed);
  }

  @Property(tries = 400)
  @Tag("stress")
  void packetsSplitOverChunksReassembleByteExactLong(@ForAll @IntRange(min = 0, max = 4) int pageSizeIdx,
      @ForAll @IntRange(min = 0, max = 4) int div,
      @ForAll @Size(max = 60) List<@DoubleRange(min = 0, max = 5) Double> sizesInChunks,
      @ForAll long seed) {
    roundTrip(4096 << pageSizeIdx, DIVS[div], sizesInChunks, seed);
  }

  private static void roundTrip(int pageSize, PageLayout layout, List<Double> sizesInChunks, long seed) {
    Random rnd = new Random(seed);
    int payload = layout.chunkSize(pageSize) - ChunkHeader.SIZE;
    List<byte[]> sent = new ArrayList<>();
    for (double d : sizesInChunks) {
      byte[] b = new byte[(int) (d * payload)];
      rnd.nextBytes(b);
      sent.add(b);
    }
    try (Arena arena = Arena.ofConfined()) {
      SharedMemoryAbi abi = new SharedMemoryAbi(arena.allocate(3L * pageSize, 4096), pageSize);
      UntrustedChunkReader reader = new UntrustedChunkReader(abi);
      List<SmbDecoder.ChunkCopy> copies = new ArrayList<>();
      ChunkStreamWriter writer = new ChunkStreamWriter(abi, 3, 1, layout, () -> drain(abi, reader, copies) > 0);
      for (byte[] b : sent) {
        assertTrue(writer.writePacket(b));
      }
      writer.flush();
      drain(abi, reader, copies);
      assertEquals(writer.nextChunkId() - 1, copies.size(), "every chunk committed once");
      for (int p = 0; p < abi.numPages(); p++) {
        assertTrue(abi.isPageFree(p));
      }
      SmbDecoder decoder = new SmbDecoder();
      List<SmbDecoder.Packet> got = decoder.decode(copies);
      assertEquals(sent.size(), got.size());
      for (int i = 0; i < sent.size(); i++) {
        assertArrayEquals(sent.get(i), got.get(i).data(), "packet " + i);
        assertFalse(got.get(i).patchPending());
      }
      assertEquals(0, decoder.stats.lostFragments);
      assertEquals(0, decoder.stats.malformedChunks);
      assertEquals(0, reader.fragmentViolations());
    }
  }

  /** The service side: commits every COMPLETE chunk in page order; returns how many. */
  private static int drain(SharedMemoryAbi abi, UntrustedChunkReader reader, List<SmbDecoder.ChunkCopy> out) {
    int n = 0;
    for (int p = 0; p < abi.numPages(); p++) {
      int complete = PageHeader.chunksInState(abi.headerBitmap(p), ChunkState.COMPLETE.bits());
      for (int c = 0; complete != 0; c++, complete >>>= 1) {
        if ((complete & 1) != 0) {
          assertEquals(ChunkReadResult.OK, reader.acquireCommitted(p, c));
          out.add(SmbDecoder.ChunkCopy.of(reader, abi.segment()));
          assertEquals(ChunkReadResult.OK, reader.releaseAsFree());
          n++;
        }
      }
    }
    return n;
  }

  // (4) Hostile bytes ----------------------------------------------------------------------------

  @Property(tries = 200)
  void randomPagesNeverBreakTheReader(@ForAll long seed, @ForAll @IntRange(min = 0, max = 2) int bias) {
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> hostile(seed, bias, 4096));
  }

  @Property(tries = 5000)
  @Tag("stress")
  void randomPagesNeverBreakTheReaderLong(@ForAll long seed, @ForAll @IntRange(min = 0, max = 2) int bias,
      @ForAll @IntRange(min = 0, max = 4) int pageSizeIdx) {
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> hostile(seed, bias, 4096 << pageSizeIdx));
  }

  /**
   * Fills an SMB of exactly two pages with random bytes (bias 1: small fragment sizes; bias 2: valid
   * layouts, COMPLETE chunks and writer ids) and reads every chunk index both ways. The segment has no slack, so a
   * read outside it throws and fails the property.
   */
  private static void hostile(long seed, int bias, int pageSize) {
    Random rnd = new Random(seed);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(2L * pageSize, 4096);
      byte[] junk = new byte[(int) smb.byteSize()];
      rnd.nextBytes(junk);
      if (bias == 1) {
        for (int i = 0; i < junk.length; i++) {
          junk[i] = (byte) (junk[i] & 0x8F);
        }
      }
      MemorySegment.copy(junk, 0, smb, ValueLayout.JAVA_BYTE, 0, junk.length);
      if (bias == 2) {
        for (int p = 0; p < 2; p++) {
          PageLayout layout = DIVS[rnd.nextInt(DIVS.length)];
          smb.set(ValueLayout.JAVA_INT, (long) p * pageSize,
              PageHeader.partitioned(layout) | PageHeader.ALL_CHUNKS_COMPLETE);
          for (int c = 0; c < layout.numChunks(); c++) {
            long writerId = (long) p * pageSize + layout.chunkOffsetInPage(pageSize, c) + ChunkHeader.WRITER_ID_OFFSET;
            smb.set(ValueLayout.JAVA_SHORT, writerId, (short) (1 + rnd.nextInt(ChunkHeader.MAX_WRITER_ID)));
          }
        }
      }
      SharedMemoryAbi abi = new SharedMemoryAbi(smb, pageSize);
      UntrustedChunkReader reader = new UntrustedChunkReader(abi);
      int ok = 0;
      for (int p = -1; p <= 2; p++) {
        for (int c = -1; c <= 15; c++) {
          int bitmap = p >= 0 && p < 2 ? abi.headerBitmap(p) : 0;
          if (reader.scrape(p, bitmap, c) == ChunkReadResult.OK) {
            checkView(abi, reader, p, pageSize);
          }
          if (reader.acquireCommitted(p, c) == ChunkReadResult.OK) {
            ok++;
            checkView(abi, reader, p, pageSize);
            assertNotEquals(null, reader.releaseAsFree());
          }
        }
      }
      if (bias == 2) {
        assertTrue(ok > 0, "valid layouts with COMPLETE chunks: some random headers must pass the checks");
      }
    }
  }

  private static void checkView(SharedMemoryAbi abi, UntrustedChunkReader r, int page, int pageSize) {
    long pageBegin = (long) page * pageSize;
    assertTrue(r.writerId() >= 1 && r.writerId() <= ChunkHeader.MAX_WRITER_ID);
    assertTrue(r.payloadOffset() >= pageBegin + PageHeader.SIZE + ChunkHeader.SIZE);
    assertTrue(r.payloadOffset() + r.payloadSize() <= pageBegin + pageSize, "chunk inside its page");
    assertTrue(r.usedSize() >= 0 && r.usedSize() <= r.payloadSize());
    assertTrue(r.fragmentsFound() <= r.usableFragments() && r.usableFragments() <= ChunkHeader.MAX_PACKET_COUNT);
    assertTrue(r.packetCount() <= ChunkHeader.MAX_PACKET_COUNT);
    assertEquals(abi.chunkOffset(r.chunk()) + ChunkHeader.SIZE, r.payloadOffset());
  }
}
