package org.jperfetto.service.buffer;

import static org.jperfetto.service.buffer.PacketReader.readAll;
import static org.jperfetto.service.buffer.PacketReader.readMore;
import static org.jperfetto.service.buffer.TestChunk.FROM_PREV;
import static org.jperfetto.service.buffer.TestChunk.ON_NEXT;
import static org.jperfetto.service.buffer.TestChunk.PATCH;
import static org.jperfetto.service.buffer.TestChunk.chunk;
import static org.jperfetto.service.buffer.TestChunk.content;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;
import org.jperfetto.service.buffer.PacketReader.Read;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class TraceBufferTest {
  private TraceBuffer tb;

  private TraceBuffer buffer(long size, OverwritePolicy policy) {
    tb = TraceBuffer.create(size, policy);
    return tb;
  }

  private TraceBuffer ring(long size) {
    return buffer(size, OverwritePolicy.RING_BUFFER);
  }

  @AfterEach
  void close() {
    if (tb != null) {
      tb.close();
    }
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  @Test
  void sizeMustBeWholePages() {
    assertThrows(IllegalArgumentException.class, () -> TraceBuffer.create(4095, OverwritePolicy.RING_BUFFER));
    assertThrows(IllegalArgumentException.class, () -> TraceBuffer.create(0, OverwritePolicy.DISCARD));
    assertThrows(IllegalArgumentException.class, () -> TraceBuffer.create(6000, OverwritePolicy.DISCARD));
  }

  @Test
  void emptyBufferReadsNothing() {
    ring(4096);
    assertEquals(List.of(), readAll(tb));
    assertFalse(tb.hasData());
    assertEquals(4096, tb.stats().bufferSize());
  }

  @Test
  void singleChunkManyPacketsInOrderWithSequenceProperties() {
    ring(4096);
    TestChunk c = chunk(3, 7, 0).identity(1234, 99);
    for (int i = 0; i < 20; i++) {
      c.packet(10 + i, i);
    }
    c.copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(20, got.size());
    for (int i = 0; i < 20; i++) {
      Read r = got.get(i);
      assertArrayEquals(content(10 + i, i), r.data(), "packet " + i);
      assertEquals(3, r.producerId());
      assertEquals(7, r.writerId());
      assertEquals(1234, r.uid());
      assertEquals(99, r.pid());
      assertEquals(1, r.slices());
      // Upstream V1: the first packet of a sequence reports a possible loss before it.
      assertEquals(i == 0, r.dropped(), "dropped flag of packet " + i);
    }
    assertEquals(List.of(), readAll(tb), "reads are destructive");
    TraceBufferStats s = tb.stats();
    assertEquals(1, s.chunksWritten());
    assertEquals(1, s.chunksRead());
    assertEquals(ChunkRecord.recordSizeFor(c.payload().length), s.bytesWritten());
    assertEquals(s.bytesWritten(), s.bytesRead());
    assertEquals(0, s.abiViolations());
  }

  @Test
  void oneByteFragmentSizesAreRead() {
    ring(4096);
    chunk(1, 1, 0).shortFragment(content(5, 1)).fragment(content(6, 2)).shortFragment(content(127, 3))
        .copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(3, got.size());
    assertArrayEquals(content(127, 3), got.get(2).data());
  }

  @Test
  void packetSpanningTwoChunksIsGlued() {
    ring(4096);
    byte[] head = content(30, 1);
    byte[] tail = content(40, 2);
    chunk(1, 1, 0).packet(10, 9).fragment(head).flags(ON_NEXT).copyInto(tb);
    chunk(1, 1, 1).fragment(tail).flags(FROM_PREV).packet(12, 8).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(3, got.size());
    assertArrayEquals(concat(head, tail), got.get(1).data());
    assertEquals(2, got.get(1).slices());
    assertFalse(got.get(1).dropped());
    assertArrayEquals(content(12, 8), got.get(2).data());
    assertFalse(got.get(2).dropped());
    assertEquals(1, tb.stats().readaheadsSucceeded());
  }

  @Test
  void packetSpanningManyChunksIsGlued() {
    ring(64 * 1024);
    byte[][] parts = new byte[6][];
    for (int i = 0; i < parts.length; i++) {
      parts[i] = content(100 + i, i);
    }
    chunk(1, 1, 10).fragment(parts[0]).flags(ON_NEXT).copyInto(tb);
    for (int i = 1; i < 5; i++) {
      chunk(1, 1, 10 + i).fragment(parts[i]).flags(FROM_PREV | ON_NEXT).copyInto(tb);
    }
    chunk(1, 1, 15).fragment(parts[5]).flags(FROM_PREV).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    assertEquals(6, got.get(0).slices());
    assertArrayEquals(concat(parts), got.get(0).data());
    assertEquals(6, tb.stats().chunksRead());
  }

  @Test
  void fragmentedPacketWaitsForItsNextChunk() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 1).packet(20, 2).flags(ON_NEXT).copyInto(tb);
    chunk(2, 1, 0).packet(10, 3).copyInto(tb);
    List<Read> first = readAll(tb);
    assertEquals(2, first.size(), "packet 1 of seq 1 and packet 3 of seq 2; 2 waits");
    assertEquals(1, tb.stats().readaheadsFailed());
    chunk(1, 1, 1).packet(5, 4).flags(FROM_PREV).packet(6, 5).copyInto(tb);
    List<Read> second = readAll(tb);
    assertEquals(2, second.size());
    assertArrayEquals(concat(content(20, 2), content(5, 4)), second.get(0).data());
    assertFalse(second.get(0).dropped());
    assertArrayEquals(content(6, 5), second.get(1).data());
  }

  @Test
  void continuationIsNotGluedToAChunkThatDoesNotContinueIt() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 1).packet(20, 2).flags(ON_NEXT).copyInto(tb);
    chunk(1, 1, 1).packet(30, 3).copyInto(tb); // a buggy producer: no continues-from-previous flag
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    assertArrayEquals(content(10, 1), got.get(0).data());
    assertEquals(1, tb.stats().readaheadsFailed());
  }

  @Test
  void missingMiddleChunkStopsTheSequenceUntilItArrives() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 1).packet(20, 2).flags(ON_NEXT).copyInto(tb);
    chunk(1, 1, 2).packet(30, 4).flags(FROM_PREV).packet(10, 5).copyInto(tb);
    chunk(1, 2, 0).packet(10, 9).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size(), "seq (1,1) stops at the hole, seq (1,2) is unaffected");
    assertArrayEquals(content(10, 1), got.get(0).data());
    assertEquals(1, got.get(0).writerId());
    assertArrayEquals(content(10, 9), got.get(1).data());
    assertEquals(2, got.get(1).writerId());
    // The middle chunk arrives late (out of order): everything flows, in order.
    chunk(1, 1, 1).packet(25, 3).flags(FROM_PREV | ON_NEXT).copyInto(tb);
    List<Read> rest = readAll(tb);
    assertEquals(2, rest.size());
    assertArrayEquals(concat(content(20, 2), content(25, 3), content(30, 4)), rest.get(0).data());
    assertFalse(rest.get(0).dropped());
    assertArrayEquals(content(10, 5), rest.get(1).data());
    assertEquals(1, tb.stats().chunksCommittedOutOfOrder());
  }

  @Test
  void lostMiddleChunkDropsThePacketAndFlagsTheNext() {
    // 3 records of 1 KiB fill a 4 KiB buffer with room for one more: chunk 1 never arrives,
    // and once chunk 0 is overwritten the reader resumes at chunk 2.
    ring(4096);
    int payload = 1024 - 16;
    chunk(1, 1, 0).packet(10, 1).packet(20, 2).flags(ON_NEXT).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 2).packet(30, 4).flags(FROM_PREV).packet(10, 5).payloadSize(payload).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    chunk(1, 1, 3).packet(11, 6).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 4).packet(12, 7).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 5).packet(13, 8).payloadSize(payload).copyInto(tb); // overwrites chunk 0
    assertEquals(1, tb.stats().chunksOverwritten(), "chunk 0 still had an unread fragment");
    got = readAll(tb);
    assertEquals(4, got.size());
    assertArrayEquals(content(10, 5), got.get(0).data());
    assertTrue(got.get(0).dropped(), "the packet spanning the lost chunk is gone");
    assertFalse(got.get(1).dropped());
    assertArrayEquals(content(13, 8), got.get(3).data());
  }

  @Test
  void chunkNeedingPatchesIsNotReadUntilPatched() {
    ring(4096);
    byte[] head = content(50, 1);
    TestChunk c0 = chunk(1, 1, 0).packet(10, 0).fragment(head).flags(ON_NEXT | PATCH);
    c0.copyInto(tb);
    chunk(1, 1, 1).packet(20, 2).flags(FROM_PREV).packet(5, 3).copyInto(tb);
    chunk(2, 1, 0).packet(10, 9).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size(), "only the other sequence is readable");
    assertEquals(2, got.get(0).producerId());

    int off = c0.fragmentOffset(1);
    Patch patch = new Patch(off, new byte[] {(byte) 0xB2, (byte) 0x80, (byte) 0x80, 0x00});
    assertTrue(tb.tryPatchChunkContents(1, 1, 0, List.of(patch), true));
    assertEquals(List.of(), readAll(tb), "more patches pending: still waiting");
    assertTrue(tb.tryPatchChunkContents(1, 1, 0, List.of(), false));
    got = readAll(tb);
    assertEquals(3, got.size());
    assertArrayEquals(content(10, 0), got.get(0).data());
    // The patch rewrote the size of the head fragment: 0x32 = 50, still valid.
    assertArrayEquals(concat(head, content(20, 2)), got.get(1).data());
    assertEquals(1, tb.stats().patchesSucceeded());
  }

  @Test
  void patchChangesTheBytesRead() {
    ring(4096);
    TestChunk c = chunk(1, 1, 0).fragment(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).flags(PATCH);
    c.copyInto(tb);
    assertTrue(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(4 + 2, new byte[] {9, 9, 9, 9})), false));
    assertArrayEquals(new byte[] {1, 2, 9, 9, 9, 9, 7, 8}, readAll(tb).get(0).data());
  }

  @Test
  void patchOfAnotherProducersChunkIsRefused() {
    ring(4096);
    chunk(1, 1, 0).fragment(new byte[] {1, 2, 3, 4}).flags(PATCH).copyInto(tb);
    assertFalse(tb.tryPatchChunkContents(2, 1, 0, List.of(new Patch(4, new byte[] {9, 9, 9, 9})), false));
    assertFalse(tb.tryPatchChunkContents(1, 2, 0, List.of(new Patch(4, new byte[] {9, 9, 9, 9})), false));
    assertFalse(tb.tryPatchChunkContents(1, 1, 1, List.of(new Patch(4, new byte[] {9, 9, 9, 9})), false));
    assertEquals(3, tb.stats().patchesFailed());
    assertEquals(List.of(), readAll(tb), "still needs patching");
    assertTrue(tb.tryPatchChunkContents(1, 1, 0, List.of(), false));
    assertArrayEquals(new byte[] {1, 2, 3, 4}, readAll(tb).get(0).data());
  }

  @Test
  void patchOutOfBoundsIsRefusedAndAppliesNothing() {
    ring(4096);
    chunk(1, 1, 0).fragment(content(28, 1)).payloadSize(32).copyInto(tb); // record 48: payload 32
    byte[] d = {9, 9, 9, 9};
    assertFalse(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(29, d)), false));
    assertFalse(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(-1, d)), false));
    assertFalse(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(Long.MAX_VALUE, d)), false));
    assertFalse(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(8, new byte[] {1, 2, 3})), false));
    assertFalse(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(8, d), new Patch(30, d)), false));
    assertEquals(5, tb.stats().patchesFailed());
    assertArrayEquals(content(28, 1), readAll(tb).get(0).data(), "a refused batch changes nothing");
    assertTrue(tb.tryPatchChunkContents(1, 1, 0, List.of(new Patch(28, d)), false), "last 4 bytes");
    assertEquals(1, tb.stats().patchesSucceeded());
  }

  @Test
  void ringWrapOverwritesOldestChunksAndFlagsTheLoss() {
    ring(8192);
    int payload = 2048 - 16;
    for (int i = 0; i < 4; i++) {
      chunk(1, 1, i).packet(100, i).payloadSize(payload).copyInto(tb);
    }
    assertEquals(1, tb.stats().writeWrapCount(), "the 4th record ends exactly at the end");
    chunk(1, 1, 4).packet(100, 4).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 5).packet(100, 5).payloadSize(payload).copyInto(tb);
    TraceBufferStats s = tb.stats();
    assertEquals(2, s.chunksOverwritten());
    assertEquals(2 * 2048, s.bytesOverwritten());
    List<Read> got = readAll(tb);
    assertEquals(4, got.size());
    assertArrayEquals(content(100, 2), got.get(0).data());
    assertTrue(got.get(0).dropped());
    for (int i = 1; i < 4; i++) {
      assertArrayEquals(content(100, 2 + i), got.get(i).data());
      assertFalse(got.get(i).dropped());
    }
  }

  @Test
  void paddingFillsTheEndOfTheBufferAndTheGapAfterAShorterRecord() {
    ring(4096);
    chunk(1, 1, 0).packet(100, 0).payloadSize(3000 - 16 - 8).copyInto(tb); // record 2992
    chunk(1, 1, 1).packet(100, 1).payloadSize(2000).copyInto(tb); // 2016: does not fit, wraps
    TraceBufferStats s = tb.stats();
    assertEquals((4096 - 2992) + (2992 - 2016), s.paddingBytesWritten(), "end padding + gap padding");
    assertEquals(1, s.writeWrapCount());
    assertEquals(1, s.chunksOverwritten());
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    assertArrayEquals(content(100, 1), got.get(0).data());
    // The next record clears the gap padding.
    chunk(1, 1, 2).packet(10, 2).copyInto(tb);
    assertEquals(2992 - 2016, tb.stats().paddingBytesCleared());
    assertEquals(1, readAll(tb).size());
  }

  @Test
  void discardStopsAcceptingWhenFullEvenAfterReading() {
    buffer(4096, OverwritePolicy.DISCARD);
    int payload = 1024 - 16;
    for (int i = 0; i < 4; i++) {
      chunk(1, 1, i).packet(100, i).payloadSize(payload).copyInto(tb);
    }
    chunk(1, 1, 4).packet(100, 4).payloadSize(payload).copyInto(tb);
    assertEquals(1, tb.stats().chunksDiscarded());
    assertEquals(0, tb.stats().chunksOverwritten());
    assertEquals(4, readAll(tb).size());
    chunk(1, 1, 5).packet(100, 5).payloadSize(payload).copyInto(tb);
    assertEquals(2, tb.stats().chunksDiscarded());
    assertEquals(List.of(), readAll(tb));
  }

  @Test
  void discardOverwritesChunksAlreadyRead() {
    buffer(4096, OverwritePolicy.DISCARD);
    int payload = 1024 - 16;
    for (int i = 0; i < 4; i++) {
      chunk(1, 1, i).packet(100, i).payloadSize(payload).copyInto(tb);
    }
    assertEquals(4, readAll(tb).size());
    chunk(1, 1, 4).packet(100, 4).payloadSize(payload).copyInto(tb);
    assertEquals(0, tb.stats().chunksDiscarded());
    assertEquals(0, tb.stats().chunksOverwritten());
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    assertArrayEquals(content(100, 4), got.get(0).data());
  }

  @Test
  void interleavedSequencesKeepTheirOwnOrder() {
    ring(64 * 1024);
    for (int c = 0; c < 10; c++) {
      for (int w = 1; w <= 3; w++) {
        chunk(w % 2 + 1, w, c).packet(8, c * 10 + w).packet(9, c * 10 + w + 100).copyInto(tb);
      }
    }
    List<Read> got = readAll(tb);
    assertEquals(60, got.size());
    for (int w = 1; w <= 3; w++) {
      final int writer = w;
      List<Read> seq = got.stream().filter(r -> r.writerId() == writer).toList();
      assertEquals(20, seq.size());
      for (int c = 0; c < 10; c++) {
        assertArrayEquals(content(8, c * 10 + w), seq.get(2 * c).data());
        assertArrayEquals(content(9, c * 10 + w + 100), seq.get(2 * c + 1).data());
      }
    }
  }

  @Test
  void outOfOrderChunkIdsAreReadInOrder() {
    ring(4096);
    chunk(1, 1, 1).packet(10, 1).copyInto(tb);
    chunk(1, 1, 0).packet(10, 0).copyInto(tb);
    chunk(1, 1, 3).packet(10, 3).copyInto(tb);
    chunk(1, 1, 2).packet(10, 2).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(4, got.size());
    for (int i = 0; i < 4; i++) {
      assertArrayEquals(content(10, i), got.get(i).data());
    }
    assertEquals(2, tb.stats().chunksCommittedOutOfOrder());
  }

  @Test
  void chunkArrivingAfterALaterChunkWasReadIsDropped() {
    ring(4096);
    chunk(1, 1, 1).packet(10, 1).copyInto(tb);
    assertEquals(1, readAll(tb).size());
    chunk(1, 1, 0).packet(10, 0).copyInto(tb);
    chunk(1, 1, 2).packet(10, 2).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size(), "chunk 0 would come out after chunk 1");
    assertArrayEquals(content(10, 2), got.get(0).data());
    assertEquals(1, tb.stats().chunksDiscarded());
  }

  @Test
  void scrapedChunkOverwrittenBeforeItsCommitIsNotReadTwiceButItsRestIs() {
    ring(4096);
    int payload = 1024 - 16;
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(10, 2).payloadSize(payload).copyInto(tb, false);
    assertEquals(2, readAll(tb).size());
    for (int i = 0; i < 4; i++) {
      chunk(2, 1, i).packet(10, 10 + i).payloadSize(payload).copyInto(tb); // overwrites the scrape
    }
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(10, 2).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 1).packet(10, 3).payloadSize(payload).copyInto(tb);
    List<Read> got = readAll(tb).stream().filter(r -> r.producerId() == 1).toList();
    assertEquals(2, got.size(), "packets 0 and 1 are not returned again: " + got);
    assertArrayEquals(content(10, 2), got.get(0).data());
    assertFalse(got.get(0).dropped(), "nothing was lost");
    assertArrayEquals(content(10, 3), got.get(1).data());
    assertEquals(0, tb.stats().chunksDiscarded());
    // Once the chunk is gone again, a stray commit of it is dropped, not read again.
    for (int i = 4; i < 8; i++) {
      chunk(2, 1, i).packet(10, 10 + i).payloadSize(payload).copyInto(tb);
    }
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(10, 2).payloadSize(payload).copyInto(tb);
    assertEquals(1, tb.stats().chunksDiscarded());
    assertEquals(List.of(), readAll(tb).stream().filter(r -> r.producerId() == 1).toList());
  }

  @Test
  void gapLeftByAReadChunkDoesNotStallTheSequence() {
    buffer(4096, OverwritePolicy.DISCARD);
    int payload = 1024 - 16;
    chunk(1, 1, 1).packet(10, 1).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 2).packet(10, 2).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 0).packet(10, 0).payloadSize(payload).copyInto(tb); // out of order: placed last
    assertEquals(3, readAll(tb).size());
    chunk(1, 1, 3).packet(10, 3).payloadSize(payload).copyInto(tb);
    chunk(1, 1, 4).packet(10, 4).payloadSize(payload).copyInto(tb); // deletes chunk 1 (read)
    assertEquals(0, tb.stats().chunksDiscarded());
    List<Read> got = readAll(tb);
    assertEquals(2, got.size(), "the reader steps over the hole chunk 1 left: " + got);
    assertArrayEquals(content(10, 3), got.get(0).data());
    assertFalse(got.get(0).dropped());
    assertArrayEquals(content(10, 4), got.get(1).data());
  }

  @Test
  void chunkIdsWrapAroundFromMaxToZero() {
    ring(8192);
    byte[] a = content(40, 1);
    byte[] b = content(41, 2);
    chunk(1, 1, 0xFFFFFFFE).packet(10, 0).copyInto(tb);
    chunk(1, 1, 0xFFFFFFFF).packet(10, 1).fragment(a).flags(ON_NEXT).copyInto(tb);
    chunk(1, 1, 0).fragment(b).flags(FROM_PREV).packet(10, 3).copyInto(tb);
    chunk(1, 1, 1).packet(10, 4).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(5, got.size());
    assertArrayEquals(content(10, 0), got.get(0).data());
    assertArrayEquals(content(10, 1), got.get(1).data());
    assertArrayEquals(concat(a, b), got.get(2).data());
    assertArrayEquals(content(10, 3), got.get(3).data());
    assertArrayEquals(content(10, 4), got.get(4).data());
    // As upstream, a sequence's newest id starts at 0, so ids from the top half count as late.
    assertEquals(2, tb.stats().chunksCommittedOutOfOrder());
  }

  @Test
  void outOfOrderAcrossTheWrap() {
    ring(8192);
    chunk(1, 1, 0xFFFFFFFF).packet(10, 0).copyInto(tb);
    chunk(1, 1, 1).packet(10, 2).copyInto(tb);
    chunk(1, 1, 0).packet(10, 1).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(3, got.size());
    for (int i = 0; i < 3; i++) {
      assertArrayEquals(content(10, i), got.get(i).data());
    }
  }

  @Test
  void zeroSizePacketsAreSkipped() {
    ring(4096);
    chunk(1, 1, 0).fragment(new byte[0]).packet(3, 1).fragment(new byte[0]).fragment(new byte[0])
        .packet(4, 2).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(content(3, 1), got.get(0).data());
    assertArrayEquals(content(4, 2), got.get(1).data());
    assertFalse(got.get(1).dropped());
    assertEquals(0, tb.stats().abiViolations());
  }

  // A loss noticed while no packet could be returned yet (the reader stopped at a packet waiting
  // for its next chunk) must still be flagged on the next packet, even when an empty packet was
  // taken out in between. Found by TraceBufferProperties (seed 2662460585368942819).
  @Test
  void lossBeforeAnEmptyPacketAndAWaitingPacketIsStillFlagged() {
    ring(4096);
    byte[] head = content(30, 2);
    byte[] tail = content(40, 3);
    // The start of the first packet was in chunk 4, which never arrives.
    chunk(1, 1, 5).packet(20, 1).flags(FROM_PREV).fragment(new byte[0]).fragment(head)
        .flags(ON_NEXT).copyInto(tb);
    assertEquals(List.of(), readAll(tb), "the last packet waits for chunk 6");
    chunk(1, 1, 6).fragment(tail).flags(FROM_PREV).packet(10, 4).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(concat(head, tail), got.get(0).data());
    assertTrue(got.get(0).dropped(), "the packet continued at the start of chunk 5 was lost");
    assertFalse(got.get(1).dropped());
  }

  @Test
  void lossAtTheStartOfASequenceIsStillFlaggedAfterAnEmptyPacketAndAWait() {
    ring(4096);
    int payload = 1024 - 16;
    chunk(1, 1, 3).packet(10, 0).payloadSize(payload).copyInto(tb);
    for (int i = 0; i < 3; i++) {
      chunk(2, 1, i).packet(10, 10 + i).payloadSize(payload).copyInto(tb);
    }
    byte[] head = content(30, 1);
    byte[] tail = content(40, 2);
    chunk(1, 1, 4).fragment(new byte[0]).fragment(head).flags(ON_NEXT).payloadSize(payload)
        .copyInto(tb); // overwrites chunk 3 unread
    assertEquals(1, tb.stats().chunksOverwritten());
    assertEquals(List.of(), readAll(tb).stream().filter(r -> r.producerId() == 1).toList());
    chunk(1, 1, 5).fragment(tail).flags(FROM_PREV).payloadSize(payload).copyInto(tb);
    List<Read> got = readAll(tb).stream().filter(r -> r.producerId() == 1).toList();
    assertEquals(1, got.size());
    assertArrayEquals(concat(head, tail), got.get(0).data());
    assertTrue(got.get(0).dropped(), "packet 0 (chunk 3) was overwritten unread");
  }

  @Test
  void lossNotYetFlaggedSurvivesTheOverwriteOfAScrapedChunk() {
    ring(4096);
    int payload = 1024 - 16;
    TestChunk scraped = chunk(1, 1, 5).packet(20, 1).flags(FROM_PREV).fragment(new byte[0])
        .packet(10, 2).payloadSize(payload);
    scraped.copyInto(tb, false); // packet 2 may still be being written: not readable yet
    assertEquals(List.of(), readAll(tb));
    for (int i = 0; i < 4; i++) {
      chunk(2, 1, i).packet(10, 10 + i).payloadSize(payload).copyInto(tb); // overwrites the scrape
    }
    scraped.copyInto(tb);
    List<Read> got = readAll(tb).stream().filter(r -> r.producerId() == 1).toList();
    assertEquals(1, got.size());
    assertArrayEquals(content(10, 2), got.get(0).data());
    assertTrue(got.get(0).dropped(), "the packet continued at the start of chunk 5 was lost");
  }

  @Test
  void dropMarkerCountsPacketLossNotAbiViolation() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).flags(ON_NEXT).copyInto(tb);
    chunk(1, 1, 1).dropMarker().flags(FROM_PREV).copyInto(tb);
    chunk(1, 1, 2).packet(10, 2).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(content(10, 0), got.get(0).data());
    assertArrayEquals(content(10, 2), got.get(1).data());
    assertTrue(got.get(1).dropped());
    assertEquals(1, tb.stats().traceWriterPacketLoss());
    assertEquals(0, tb.stats().abiViolations());
  }

  @Test
  void dropMarkerAfterWholePacketsInAChunk() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 0).dropMarker().copyInto(tb);
    chunk(1, 1, 1).packet(10, 1).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertTrue(got.get(1).dropped());
    assertEquals(1, tb.stats().traceWriterPacketLoss());
  }

  @Test
  void moreFragmentsDeclaredThanPresentIsAnAbiViolation() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 0).declare(5).copyInto(tb);
    chunk(1, 1, 1).packet(10, 1).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertTrue(got.get(1).dropped());
    assertEquals(1, tb.stats().abiViolations());
  }

  @Test
  void badVarintsAreAbiViolations() {
    ring(4096);
    chunk(1, 1, 0).raw(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1).declare(1).copyInto(tb);
    chunk(1, 2, 0).raw((byte) 100, 1, 2).declare(1).copyInto(tb); // size past the chunk end
    // 15 + 1 bytes: no rounding after the payload, the varint is cut by the record end.
    chunk(1, 3, 0).packet(11, 3).raw(0x80).declare(2).copyInto(tb);
    chunk(1, 4, 0).packet(3, 1).raw(0x8F, 0x7F).declare(2).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(content(11, 3), got.get(0).data());
    assertArrayEquals(content(3, 1), got.get(1).data());
    assertEquals(4, tb.stats().abiViolations());
  }

  @Test
  void sourceOutOfBoundsOrChunkTooBigIsAnAbiViolation() {
    ring(4096);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(8192);
      tb.copyChunkUntrusted(1, 0, 0, 1, 0, 1, 0, true, smb, 8000, 200);
      tb.copyChunkUntrusted(1, 0, 0, 1, 0, 1, 0, true, smb, -1, 10);
      tb.copyChunkUntrusted(1, 0, 0, 1, 0, 1, 0, true, smb, 0, -5);
      tb.copyChunkUntrusted(1, 0, 0, 1, 0, 1, 0, true, smb, 0, 4096); // record 4112 > buffer
    }
    assertEquals(4, tb.stats().abiViolations());
    assertEquals(0, tb.stats().chunksWritten());
  }

  @Test
  void garbagePayloadNeverThrowsAndIsCounted() {
    ring(16384);
    Random rnd = new Random(5);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(65536);
      for (int round = 0; round < 2000; round++) {
        int size = rnd.nextInt(600);
        for (int i = 0; i < size; i++) {
          smb.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        }
        tb.copyChunkUntrusted(1 + rnd.nextInt(2), 0, 0, rnd.nextInt(3), rnd.nextInt(8),
            rnd.nextInt(1 << 10), rnd.nextInt(64), rnd.nextBoolean(), smb, 0, size);
        if (rnd.nextInt(4) == 0) {
          tb.tryPatchChunkContents(1, rnd.nextInt(3), rnd.nextInt(8),
              List.of(new Patch(rnd.nextInt(700) - 50, new byte[] {1, 2, 3, 4})), rnd.nextBoolean());
        }
        if (rnd.nextInt(8) == 0) {
          for (Read r : readAll(tb)) {
            assertTrue(r.data().length > 0);
          }
        }
      }
    }
    assertTrue(tb.stats().abiViolations() > 0);
  }

  @Test
  void incompleteChunkRecommittedCompleteYieldsEachPacketOnce() {
    ring(4096);
    TestChunk scraped = chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(4, 2).payloadSize(200);
    scraped.copyInto(tb, false); // the writer may still be writing packet 2
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    chunk(1, 1, 1).packet(10, 9).copyInto(tb);
    assertEquals(List.of(), readAll(tb), "the reader does not go past an incomplete chunk");
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(10, 2).packet(10, 3).payloadSize(200).copyInto(tb);
    got = readAll(tb);
    assertEquals(3, got.size());
    assertArrayEquals(content(10, 2), got.get(0).data());
    assertFalse(got.get(0).dropped());
    assertArrayEquals(content(10, 3), got.get(1).data());
    assertArrayEquals(content(10, 9), got.get(2).data());
    assertEquals(1, tb.stats().chunksRewritten());
  }

  @Test
  void recommitWithAnotherSizeOrFewerFragmentsIsAnAbiViolation() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).payloadSize(200).copyInto(tb, false);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).payloadSize(400).copyInto(tb);
    chunk(1, 1, 0).payloadSize(200).copyInto(tb);
    assertEquals(2, tb.stats().abiViolations());
    assertEquals(0, tb.stats().chunksRewritten());
  }

  @Test
  void recommitAfterTheNextChunkWasReadIsRefused() {
    ring(4096);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).payloadSize(200).copyInto(tb);
    chunk(1, 1, 1).packet(10, 5).copyInto(tb);
    assertEquals(3, readAll(tb).size());
    // A producer adding packets to chunk 0 after chunk 1 was read would break the order.
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).packet(10, 2).payloadSize(200).copyInto(tb);
    assertEquals(1, tb.stats().abiViolations());
    assertEquals(0, tb.stats().chunksRewritten());
    assertEquals(List.of(), readAll(tb));
  }

  @Test
  void incompleteChunkIgnoresTheFlagsOfItsUnfinishedLastPacket() {
    ring(4096);
    chunk(1, 1, 0).packet(20, 1).packet(30, 2).flags(ON_NEXT | PATCH).payloadSize(512).copyInto(tb, false);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size(), "the first packet is readable although the chunk needs patching");
    assertArrayEquals(content(20, 1), got.get(0).data());
  }

  @Test
  void recommitCompletingAFragmentedPacketGluesIt() {
    ring(4096);
    chunk(1, 1, 0).packet(20, 1).packet(30, 2).flags(ON_NEXT).payloadSize(512).copyInto(tb, false);
    assertEquals(1, readAll(tb).size());
    chunk(1, 1, 1).packet(40, 3).flags(FROM_PREV).packet(50, 4).payloadSize(512).copyInto(tb);
    assertEquals(List.of(), readAll(tb), "not past the incomplete chunk");
    chunk(1, 1, 0).packet(20, 1).packet(30, 2).flags(ON_NEXT).payloadSize(512).copyInto(tb, true);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(concat(content(30, 2), content(40, 3)), got.get(0).data());
    assertArrayEquals(content(50, 4), got.get(1).data());
  }

  @Test
  void recommitOfAReadChunkWithOtherContentDoesNotStallTheSequence() {
    ring(4096);
    chunk(1, 1, 0).packet(30, 1).packet(40, 2).payloadSize(512).copyInto(tb);
    assertEquals(2, readAll(tb).size());
    // Same size, more fragments, but the reader's offset now points into other bytes.
    chunk(1, 1, 0).packet(10, 7).packet(10, 8).packet(10, 9).payloadSize(512).copyInto(tb);
    assertEquals(List.of(), readAll(tb));
    chunk(1, 1, 1).packet(10, 4).packet(10, 5).payloadSize(512).copyInto(tb);
    List<Read> got = readAll(tb);
    assertEquals(2, got.size());
    assertArrayEquals(content(10, 4), got.get(0).data());
    assertArrayEquals(content(10, 5), got.get(1).data());
  }

  @Test
  void patchesAtBothEndsOfAChunk() {
    ring(4096);
    chunk(1, 1, 0).packet(100, 1).flags(ON_NEXT).copyInto(tb);
    TestChunk middle = chunk(1, 1, 1).packet(24, 2).flags(FROM_PREV | ON_NEXT | PATCH); // data at 4..27
    middle.copyInto(tb);
    chunk(1, 1, 2).packet(100, 3).flags(FROM_PREV).copyInto(tb);
    byte[] a = {'P', 'E', 'R', 'F'};
    byte[] b = {'E', 'T', 'T', 'O'};
    assertTrue(tb.tryPatchChunkContents(1, 1, 1, List.of(new Patch(4, a), new Patch(24, b)), false));
    byte[] expected = content(24, 2);
    System.arraycopy(a, 0, expected, 0, 4);
    System.arraycopy(b, 0, expected, 20, 4);
    List<Read> got = readAll(tb);
    assertEquals(1, got.size());
    assertArrayEquals(concat(content(100, 1), expected, content(100, 3)), got.get(0).data());
    assertEquals(2, tb.stats().patchesSucceeded());
  }

  @Test
  void writesDuringAReadDoNotRepeatPackets() {
    ring(8192);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).copyInto(tb);
    chunk(2, 1, 0).packet(10, 2).copyInto(tb);
    tb.beginRead();
    BufferedPacket p = new BufferedPacket();
    assertTrue(tb.readNextTracePacket(p));
    chunk(1, 1, 1).packet(10, 3).copyInto(tb);
    List<Read> rest = readMore(tb);
    assertEquals(3, rest.size());
    assertArrayEquals(content(10, 1), rest.get(0).data());
    assertArrayEquals(content(10, 3), rest.get(1).data());
    assertArrayEquals(content(10, 2), rest.get(2).data());
  }

  @Test
  void copyIsReadOnlyWithTheSameUnreadPackets() {
    ring(8192);
    chunk(1, 1, 0).packet(10, 0).packet(10, 1).copyInto(tb);
    BufferedPacket p = new BufferedPacket();
    tb.beginRead();
    assertTrue(tb.readNextTracePacket(p));
    try (TraceBuffer clone = tb.copy()) {
      assertTrue(clone.isReadOnly());
      assertThrows(IllegalStateException.class, () -> chunk(1, 1, 1).packet(1, 1).copyInto(clone));
      assertThrows(IllegalStateException.class, () -> clone.tryPatchChunkContents(1, 1, 0, List.of(), false));
      List<Read> fromClone = readAll(clone);
      assertEquals(1, fromClone.size());
      assertArrayEquals(content(10, 1), fromClone.get(0).data());
      assertEquals(tb.stats().bytesWritten(), clone.stats().bytesWritten());
    }
    List<Read> fromOriginal = readAll(tb);
    assertEquals(1, fromOriginal.size(), "reading the clone does not consume the original");
  }

  @Test
  void copyOfAWrappedBufferReadsLikeTheOriginal() {
    ring(8192);
    for (int i = 0; i < 9; i++) {
      chunk(1 + i % 2, 1, i / 2).packet(1000 + 100 * i, i).copyInto(tb);
    }
    assertTrue(tb.stats().writeWrapCount() > 0);
    assertTrue(tb.stats().paddingBytesWritten() > 0);
    try (TraceBuffer clone = tb.copy()) {
      List<Read> fromClone = readAll(clone);
      List<Read> fromOriginal = readAll(tb);
      assertEquals(fromOriginal.size(), fromClone.size());
      assertTrue(fromClone.size() > 0);
      for (int i = 0; i < fromClone.size(); i++) {
        assertArrayEquals(fromOriginal.get(i).data(), fromClone.get(i).data());
        assertEquals(fromOriginal.get(i).dropped(), fromClone.get(i).dropped());
      }
      assertEquals(tb.stats().chunksRead(), clone.stats().chunksRead());
    }
  }

  @Test
  void closedBufferRefusesUse() {
    TraceBuffer b = TraceBuffer.create(4096, OverwritePolicy.RING_BUFFER);
    b.close();
    b.close();
    assertThrows(IllegalStateException.class, b::beginRead);
  }
}
