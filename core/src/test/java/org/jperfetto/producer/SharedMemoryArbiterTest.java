package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageHeader;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.producer.proto.PatchList;
import org.jperfetto.protos.CommitDataRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Chunk hand-out, commit batching, writer ids and the exhausted-buffer policies. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SharedMemoryArbiterTest {
  @Test
  void pagesArePartitionedDiv1AndChunksHandedOutRoundRobin() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 4, 4096, 1 << 20)) {
      SharedMemoryArbiter arbiter = sink.arbiter;
      for (int i = 0; i < 4; i++) {
        long chunk = arbiter.getNewChunk(1, i, (short) 0, BufferExhaustedPolicy.DROP);
        assertTrue(ChunkHandle.isValid(chunk));
        assertEquals(i, ChunkHandle.page(chunk));
        assertEquals(PageLayout.DIV1, arbiter.abi().pageLayout(i));
        assertEquals(i, arbiter.abi().chunkId(chunk));
        assertEquals(1, arbiter.abi().writerId(chunk));
      }
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 9, (short) 0, BufferExhaustedPolicy.DROP));
    }
  }

  @Test
  void returnedChunksAndPatchesAreBatchedIntoOneCommit() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 4, 4096, 1 << 20)) {
      SharedMemoryArbiter arbiter = sink.arbiter;
      PatchList patches = new PatchList();
      long a = arbiter.getNewChunk(3, 0, (short) 0, BufferExhaustedPolicy.DROP);
      long b = arbiter.getNewChunk(3, 1, (short) 0, BufferExhaustedPolicy.DROP);
      long seq1 = patches.annotate(7, 10);
      long seq2 = patches.annotate(7, 20);
      patches.annotate(8, 30); // stays unpatched
      patches.fill(seq1, 5);
      patches.fill(seq2, 300);
      arbiter.returnCompletedChunk(a, 3, 2, patches);
      arbiter.returnCompletedChunk(b, 3, 2, patches);
      assertEquals(PageHeader.ALL_CHUNKS_COMPLETE & 3, arbiter.abi().headerBitmap(0) & 3, "COMPLETE");
      CommitDataRequest req = CommitRequests.toProto(arbiter.drainTo(new CommitBatch()));
      assertEquals(2, req.getChunksToMoveCount());
      assertEquals(0, req.getChunksToMove(0).getPage());
      assertEquals(1, req.getChunksToMove(1).getPage());
      assertEquals(2, req.getChunksToMove(1).getTargetBuffer());
      assertEquals(1, req.getChunksToPatchCount(), "two patches of chunk 7 in one ChunkToPatch");
      CommitDataRequest.ChunkToPatch p = req.getChunksToPatch(0);
      assertEquals(7, p.getChunkId());
      assertEquals(3, p.getWriterId());
      assertEquals(2, p.getPatchesCount());
      assertEquals(20, p.getPatches(1).getOffset());
      assertEquals("ac828000", java.util.HexFormat.of().formatHex(p.getPatches(1).getData().toByteArray()));
      assertFalse(p.getHasMorePatches());
      assertEquals(1, patches.size());
      arbiter.notifyFlushComplete(42);
      CommitDataRequest ack = CommitRequests.toProto(arbiter.drainTo(new CommitBatch()));
      assertEquals(42, ack.getFlushRequestId());
      assertEquals(0, ack.getChunksToMoveCount());
    }
  }

  @Test
  void stallThenDropWaitsABitThenDropsAtOnceUntilAChunkIsFree() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      sink.arbiter.maxStallsBeforeDrop = 3;
      AtomicInteger yields = new AtomicInteger();
      sink.arbiter.yieldToService = yields::incrementAndGet;
      TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.STALL_THEN_DROP);
      byte[] filler = new byte[100];
      for (int i = 0; i < 200; i++) {
        writer.newTracePacket().appendBytes(1, filler);
      }
      writer.finishTracePacket();
      assertEquals(1, writer.dropEvents());
      assertTrue(sink.arbiter.stalls() >= 3);
      // The stalls park; the attempt that gives up yields, and so does each retry while dropping
      // (one per 1 KiB garbage chunk, about ten of these packets), not each dropped packet.
      assertTrue(yields.get() >= 1 && yields.get() <= writer.droppedPackets() / 5 + 1,
          "yields " + yields.get() + " for " + writer.droppedPackets() + " dropped packets");
      long stallsWhenDropping = sink.arbiter.stalls();
      for (int i = 0; i < 50; i++) {
        writer.newTracePacket().appendBytes(1, filler);
      }
      assertEquals(stallsWhenDropping, sink.arbiter.stalls(), "once dropping, no more waiting");
      assertTrue(writer.droppedPackets() > 0);
    }
  }

  @Test
  void writerIdsAreUniqueUntilReleased() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 1, 4096, 1 << 20)) {
      SharedMemoryArbiter arbiter = sink.arbiter;
      for (int id = 1; id <= ChunkHeader.MAX_WRITER_ID; id++) {
        assertEquals(id, arbiter.acquireWriterId());
      }
      assertEquals(0, arbiter.acquireWriterId(), "all taken");
      arbiter.releaseWriterId(77, 0);
      assertEquals(77, arbiter.acquireWriterId());
    }
  }

  /** A released id is not given out again while others are free: its sequence's chunk ids would restart. */
  @Test
  void writerIdsGoRoundRatherThanReuseTheOneJustReleased() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 1, 4096, 1 << 20)) {
      SharedMemoryArbiter arbiter = sink.arbiter;
      assertEquals(1, arbiter.acquireWriterId());
      arbiter.releaseWriterId(1, 0);
      assertEquals(2, arbiter.acquireWriterId());
      arbiter.releaseWriterId(2, 0);
      assertEquals(3, arbiter.acquireWriterId());
    }
  }

  @Test
  void stallWaitsForTheServiceAndStopsWaitingWhenDetached() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 1, 4096, 1 << 20)) {
      SharedMemoryArbiter arbiter = sink.arbiter;
      long held = arbiter.getNewChunk(1, 0, (short) 0, BufferExhaustedPolicy.STALL);
      CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(
          () -> arbiter.getNewChunk(2, 0, (short) 0, BufferExhaustedPolicy.STALL));
      Thread.sleep(50);
      assertFalse(waiting.isDone());
      arbiter.returnCompletedChunk(held, 1, 1, new PatchList());
      sink.drain(); // the service frees it: the stalled writer gets it
      assertTrue(ChunkHandle.isValid(waiting.get(10, TimeUnit.SECONDS)));
      CompletableFuture<Long> again = CompletableFuture.supplyAsync(
          () -> arbiter.getNewChunk(3, 0, (short) 0, BufferExhaustedPolicy.STALL));
      Thread.sleep(50);
      assertFalse(again.isDone());
      arbiter.detach();
      assertEquals(ChunkHandle.INVALID, again.get(10, TimeUnit.SECONDS));
      assertTrue(arbiter.stalls() > 0);
    }
  }

  /** Counts what the arbiter asks of its sink. */
  private static final class CountingSink implements SharedMemoryArbiter.CommitSink {
    int now;
    int soon;
    long lastBatch = -1;

    @Override
    public void commitPending() {
      now++;
    }

    @Override
    public void commitSoon(long batch) {
      soon++;
      lastBatch = batch;
    }
  }

  /** Writer 1 takes a chunk (chunkId) and hands it back complete, for target buffer 1. */
  private static void completeChunk(SharedMemoryArbiter arbiter, int chunkId, PatchList patches) {
    arbiter.returnCompletedChunk(arbiter.getNewChunk(1, chunkId, (short) 0, BufferExhaustedPolicy.DROP), 1, 1,
        patches);
  }

  private static SharedMemoryArbiter arbiterOver(int pages, CountingSink sink, java.lang.foreign.Arena arena) {
    return new SharedMemoryArbiter(new org.jperfetto.abi.SharedMemoryAbi(arena.allocate(pages * 4096L, 4096), 4096),
        sink, () -> false);
  }

  @Test
  void batchesAreAQuarterOfTheSmbFromOneTo64Chunks() {
    assertEquals(1, SharedMemoryArbiter.commitBatchChunks(1));
    assertEquals(1, SharedMemoryArbiter.commitBatchChunks(7));
    assertEquals(2, SharedMemoryArbiter.commitBatchChunks(8));
    assertEquals(16, SharedMemoryArbiter.commitBatchChunks(64), "the default 256 KiB SMB");
    assertEquals(64, SharedMemoryArbiter.commitBatchChunks(256), "1 MiB");
    assertEquals(64, SharedMemoryArbiter.commitBatchChunks(4096), "16 MiB");
  }

  @Test
  void chunksGoInBatchesAndFewerWaitForOneLateDrain() {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      CountingSink sink = new CountingSink();
      SharedMemoryArbiter arbiter = arbiterOver(16, sink, arena);
      assertEquals(4, arbiter.commitBatchChunks(), "a quarter of 16 pages");
      PatchList patches = new PatchList();
      for (int i = 0; i < 3; i++) {
        completeChunk(arbiter, i, patches);
      }
      assertEquals(0, sink.now, "three chunks wait for the fourth");
      assertEquals(1, sink.soon, "one late drain covers them");
      completeChunk(arbiter, 3, patches);
      assertEquals(1, sink.now, "the fourth sends the batch");
      assertEquals(4, arbiter.drainTo(new CommitBatch()).moves);
      completeChunk(arbiter, 4, patches);
      assertEquals(2, sink.soon, "after a drain, the next held-back chunk gets a late drain of its own");
      arbiter.requestDrain();
      assertEquals(2, sink.now, "a writer's flush sends what is held back at once");
    }
  }

  /**
   * In a burst the writer sends each full batch itself, before the late drain its first chunk asked
   * for comes due; that late drain must not take the next batch half full.
   */
  @Test
  void aLateDrainTakesOnlyTheBatchItWasAskedFor() {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      CountingSink sink = new CountingSink();
      SharedMemoryArbiter arbiter = arbiterOver(16, sink, arena);
      PatchList patches = new PatchList();
      int chunkId = 0;
      completeChunk(arbiter, chunkId++, patches);
      long first = sink.lastBatch;
      for (int i = 0; i < 3; i++) {
        completeChunk(arbiter, chunkId++, patches);
      }
      assertEquals(1, sink.now, "the full batch goes now");
      assertEquals(4, arbiter.drainTo(new CommitBatch()).moves, "the writer sends it");
      for (int i = 0; i < 2; i++) {
        completeChunk(arbiter, chunkId++, patches);
      }
      assertEquals(2, sink.soon, "the next batch asked for a late drain of its own");
      long second = sink.lastBatch;
      assertTrue(second != first);
      assertEquals(0, arbiter.drainLateTo(new CommitBatch(), first).moves, "the first batch's late drain: nothing");
      assertEquals(2, arbiter.drainLateTo(new CommitBatch(), second).moves, "the second's takes its two chunks");
      assertEquals(0, arbiter.drainTo(new CommitBatch()).moves);
    }
  }

  @Test
  void aTinySmbSendsEachChunkAtOnce() {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      CountingSink sink = new CountingSink();
      SharedMemoryArbiter arbiter = arbiterOver(4, sink, arena);
      assertEquals(1, arbiter.commitBatchChunks());
      PatchList patches = new PatchList();
      completeChunk(arbiter, 0, patches);
      assertEquals(1, sink.now);
      assertEquals(0, sink.soon);
    }
  }

  /** A writer that finds no free chunk sends the held-back batch at once, so the service frees it. */
  @Test
  void aFullSmbSendsTheHeldBackBatchAtOnce() {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      CountingSink sink = new CountingSink();
      SharedMemoryArbiter arbiter = arbiterOver(16, sink, arena);
      PatchList patches = new PatchList();
      long[] inFlight = new long[16];
      for (int i = 0; i < 16; i++) {
        inFlight[i] = arbiter.getNewChunk(1, i, (short) 0, BufferExhaustedPolicy.DROP);
      }
      arbiter.returnCompletedChunk(inFlight[0], 1, 1, patches);
      arbiter.returnCompletedChunk(inFlight[1], 1, 1, patches);
      assertEquals(0, sink.now, "two chunks wait for a batch of four");
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 16, (short) 0, BufferExhaustedPolicy.DROP));
      assertEquals(1, sink.now, "no free chunk: the two go now");
      assertEquals(2, arbiter.drainTo(new CommitBatch()).moves);
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 17, (short) 0, BufferExhaustedPolicy.DROP));
      assertEquals(1, sink.now, "nothing held back: nothing to send");
    }
  }

  /** A service that, when it serves, frees every chunk committed so far. */
  private static final class FreeingSink implements SharedMemoryArbiter.CommitSink {
    SharedMemoryArbiter arbiter;
    volatile int asked;

    @Override
    public void commitPending() {
      asked++;
    }

    /** The service reads what the arbiter holds for it and frees those chunks. */
    synchronized void serve() {
      CommitDataRequest req = CommitRequests.toProto(arbiter.drainTo(new CommitBatch()));
      for (CommitDataRequest.ChunksToMove m : req.getChunksToMoveList()) {
        long c = arbiter.abi().tryAcquireChunkForReading(m.getPage(), m.getChunk());
        assertTrue(ChunkHandle.isValid(c));
        arbiter.abi().releaseChunkAsFree(c);
      }
    }
  }

  /** An arbiter over 4 pages whose chunks are all complete and committed, not yet freed. */
  private static SharedMemoryArbiter fullArbiter(FreeingSink sink, java.lang.foreign.Arena arena, long graceNanos) {
    SharedMemoryArbiter arbiter = new SharedMemoryArbiter(
        new org.jperfetto.abi.SharedMemoryAbi(arena.allocate(4 * 4096L, 4096), 4096), sink, () -> false);
    sink.arbiter = arbiter;
    arbiter.dropGraceNanos(graceNanos);
    arbiter.yieldToService = () -> { };
    for (int i = 0; i < 4; i++) {
      completeChunk(arbiter, i, new PatchList());
    }
    return arbiter;
  }

  @Test
  void dropWaitsOutItsGraceForTheServiceToFreeAChunk() throws Exception {
    assertEquals(TimeUnit.MILLISECONDS.toNanos(1), SharedMemoryArbiter.DEFAULT_DROP_GRACE_NANOS);
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
      FreeingSink behind = new FreeingSink();
      SharedMemoryArbiter arbiter = fullArbiter(behind, arena, TimeUnit.SECONDS.toNanos(10));
      Thread service = Thread.ofPlatform().start(() -> {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          return;
        }
        behind.serve();
      });
      long t0 = System.nanoTime();
      long chunk = arbiter.getNewChunk(1, 4, (short) 0, BufferExhaustedPolicy.DROP, false);
      long waited = System.nanoTime() - t0;
      service.join();
      assertTrue(ChunkHandle.isValid(chunk), "the service freed chunks within the grace");
      assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(40), "waited for the service: " + waited);
      assertTrue(arbiter.stalls() >= 2, "in short sleeps: " + arbiter.stalls());

      FreeingSink same = new FreeingSink();
      SharedMemoryArbiter upstreamLike = fullArbiter(same, arena, 0);
      assertEquals(ChunkHandle.INVALID, upstreamLike.getNewChunk(1, 4, (short) 0, BufferExhaustedPolicy.DROP, false),
          "no grace: dropped at once");
      assertEquals(0, upstreamLike.stalls());
      same.serve();
      assertTrue(ChunkHandle.isValid(upstreamLike.getNewChunk(1, 5, (short) 0, BufferExhaustedPolicy.DROP, true)),
          "the retry finds the freed chunks");
    }
  }

  @Test
  void dropGivesUpAfterTheGraceAndARetryDoesNotWait() {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      FreeingSink stuck = new FreeingSink();
      long grace = TimeUnit.MILLISECONDS.toNanos(20);
      SharedMemoryArbiter arbiter = fullArbiter(stuck, arena, grace);
      long t0 = System.nanoTime();
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 4, (short) 0, BufferExhaustedPolicy.DROP, false));
      assertTrue(System.nanoTime() - t0 >= grace, "waited the whole grace");
      long stalls = arbiter.stalls();
      assertTrue(stalls >= 2, "slept in short steps: " + stalls);
      assertTrue(stuck.asked >= 1, "asked the service to commit what it holds");
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 4, (short) 0, BufferExhaustedPolicy.DROP, true));
      assertEquals(stalls, arbiter.stalls(), "a writer already dropping does not wait again");
      arbiter.detach();
      assertEquals(ChunkHandle.INVALID, arbiter.getNewChunk(1, 4, (short) 0, BufferExhaustedPolicy.DROP, false));
      assertEquals(stalls, arbiter.stalls(), "no grace once the service is gone");
    }
  }

  /** A TraceWriter waits only when it starts dropping, not on each retry while it drops. */
  @Test
  void aDroppingWriterWaitsOnceAnEpisode() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      sink.arbiter.dropGraceNanos(TimeUnit.MILLISECONDS.toNanos(2));
      sink.arbiter.yieldToService = () -> { };
      TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.DROP);
      byte[] filler = new byte[100];
      for (int i = 0; i < 200; i++) {
        writer.newTracePacket().appendBytes(1, filler);
      }
      writer.finishTracePacket();
      assertEquals(1, writer.dropEvents());
      long stallsFirstEpisode = sink.arbiter.stalls();
      assertTrue(stallsFirstEpisode >= 1);
      for (int i = 0; i < 100; i++) {
        writer.newTracePacket().appendBytes(1, filler);
      }
      writer.finishTracePacket();
      assertEquals(stallsFirstEpisode, sink.arbiter.stalls(), "retries while dropping do not wait");
      sink.drain(); // the service catches up: the writer gets chunks again, then fills them
      for (int i = 0; i < 200; i++) {
        writer.newTracePacket().appendBytes(1, filler);
      }
      writer.finishTracePacket();
      assertEquals(2, writer.dropEvents());
      assertTrue(sink.arbiter.stalls() > stallsFirstEpisode, "a new episode waits again");
    }
  }
}
