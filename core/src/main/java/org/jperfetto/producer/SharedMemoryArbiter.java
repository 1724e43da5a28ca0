package org.jperfetto.producer;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.ipc.MountedLock;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.producer.proto.PatchList;

/**
 * The producer's side of one shared memory buffer: hands free chunks to {@link TraceWriter}s,
 * collects the chunks they give back and their patches into the next CommitData, and allocates
 * writer ids.
 *
 * <p>Pages are partitioned with upstream's default layout, one chunk per page ({@link
 * PageLayout#DIV1}), and scanned round-robin from where the last search stopped. A lock is taken
 * only to acquire or return a chunk, never per packet. Completed work is batched: the first item of
 * an empty batch, a patch, or half the buffer pending asks the {@link CommitSink} to drain, and the
 * sink sends the batch from its own thread (upstream's batch period is 0 ms, so "batched" means
 * whatever accumulates until the sink's thread runs).
 */
final class SharedMemoryArbiter {
  /** The layout upstream partitions pages with (kPageDiv1). */
  static final PageLayout DEFAULT_PAGE_LAYOUT = PageLayout.DIV1;

  /** Where batches go: the connection (CommitData over IPC) or, in benchmarks, a fake service. */
  interface CommitSink {
    /** Pending work exists; arrange for {@link #drainTo} to be called soon, off the caller's thread. */
    void commitPending();

    /**
     * Pending work exists that may wait a little ({@link #LATE_DRAIN_MS}): arrange for {@link
     * #drainLateTo} of this batch (its number) then, on another thread. By default, as {@link
     * #commitPending()}.
     */
    default void commitSoon(long batch) {
      commitPending();
    }

    /** A writer was created for target_buffer (RegisterTraceWriter). */
    default void registerTraceWriter(int writerId, int targetBuffer) {}

    /** A writer went away (UnregisterTraceWriter). */
    default void unregisterTraceWriter(int writerId) {}
  }

  private static final long MAX_STALL_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** STALL_THEN_DROP gives up after this many waits (upstream's kAssertAtNStalls). */
  static final int MAX_STALLS_BEFORE_DROP = 300;
  /** How long a DROP writer waits for a free chunk before it starts dropping, by default. */
  static final long DEFAULT_DROP_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  /** One sleep of a writer waiting out its drop grace. */
  private static final long DROP_GRACE_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

  private final SharedMemoryAbi abi;
  private final CommitSink sink;
  /** Guards chunk search, the pending batch and the writer ids; see {@link MountedLock}. */
  private final MountedLock lock = new MountedLock();
  private int pageIndex; // guarded by lock
  private CommitBatch pending = new CommitBatch(); // guarded by lock
  private boolean drainRequested; // guarded by lock
  /** A late drain is on its way (commitSoon), for chunks held back below commitBatchChunks. */
  private boolean lateDrainScheduled; // guarded by lock
  /** Batches taken so far, which numbers the pending one: a late drain takes only its own batch. */
  private long batchesTaken; // guarded by lock
  /**
   * Completed chunks a batch collects before the writer that completes one sends it: a quarter of
   * the SMB's pages, at most {@link #MAX_COMMIT_BATCH_CHUNKS} (16 for the default 256 KiB SMB of
   * 4 KiB pages, 64 from 1 MiB up), at least 1. A CommitData costs the writer's thread a syscall
   * and a wake-up of the service, which on a small machine then competes with it for a core: sent
   * for every chunk of the default SMB, those took a third of a cold 1M-slice burst's time. Upstream's
   * SDK batches by handing commits to its IPC thread, and what completes before that thread runs
   * rides along; here the writer sends, and the batch size bounds what waits. What is held back
   * below it goes within {@link #LATE_DRAIN_MS} on the sink's own thread, and a flush sends at once.
   */
  private final int commitBatchChunks;
  /** The largest batch: 256 KiB of 4 KiB chunks, as a 16 MiB SMB had since batching began. */
  static final int MAX_COMMIT_BATCH_CHUNKS = 64;
  /** How long chunks held back for a batch may wait for the next one. */
  static final long LATE_DRAIN_MS = 2;
  private final BitSet writerIds = new BitSet(); // guarded by lock
  private int lastWriterId; // guarded by lock
  /** Per writer id, the chunk id its next writer starts from (see {@link #releaseWriterId(int, int)}). */
  private final int[] nextChunkIds = new int[ChunkHeader.MAX_WRITER_ID + 1]; // guarded by lock
  /** Live writers by id, for flushes. */
  private final TraceWriter[] writers = new TraceWriter[ChunkHeader.MAX_WRITER_ID + 1]; // guarded by lock
  /** The heavy side of the flush handshake; false when the process cannot run one (no membarrier). */
  private final BooleanSupplier processBarrier;
  /** Waits STALL_THEN_DROP allows; lowered by tests. */
  int maxStallsBeforeDrop = MAX_STALLS_BEFORE_DROP;
  /**
   * Run on a writer's thread each time it finds no free chunk and is about to drop (not under
   * STALL, which waits anyway): {@link Thread#yield}. When a burst fills the SMB on a machine with
   * few cores, the service thread that would free chunks is often runnable but queued behind this
   * very writer on its CPU (the commit just sent woke it there), and a writer that went on dropping
   * kept it waiting until the scheduler preempted it, milliseconds later. With nothing else
   * runnable on the CPU the yield returns at once. A writer that keeps dropping asks again only
   * when it retries, after each 1 KiB of dropped packets. Replaced by tests.
   */
  Runnable yieldToService = Thread::yield;
  private volatile long dropGraceNanos = DEFAULT_DROP_GRACE_NANOS;
  private volatile boolean detached;
  private volatile long stalls;
  /** Writers closed because their thread had ended ({@link #closeEndedWriters}). */
  private final AtomicLong endedWritersClosed = new AtomicLong();
  /** Packets dropped by writers whose thread ended before any later packet of theirs could land. */
  private final AtomicLong lostByEndedWriters = new AtomicLong();

  SharedMemoryArbiter(SharedMemoryAbi abi, CommitSink sink) {
    this(abi, sink, WriterFlush::membarrier);
  }

  /** With processBarrier as the flusher's barrier (tests pass one that is unavailable). */
  SharedMemoryArbiter(SharedMemoryAbi abi, CommitSink sink, BooleanSupplier processBarrier) {
    this.abi = abi;
    this.sink = sink;
    this.processBarrier = processBarrier;
    this.commitBatchChunks = commitBatchChunks(abi.numPages());
  }

  /** The batch size for an SMB of numPages pages: a quarter of them, from 1 to {@value #MAX_COMMIT_BATCH_CHUNKS}. */
  static int commitBatchChunks(int numPages) {
    return Math.max(1, Math.min(MAX_COMMIT_BATCH_CHUNKS, numPages / 4));
  }

  /** Completed chunks a CommitData waits for before a writer sends it (1: each at once). */
  int commitBatchChunks() {
    return commitBatchChunks;
  }

  SharedMemoryAbi abi() {
    return abi;
  }

  MemorySegment segment() {
    return abi.segment();
  }

  /** Times a writer had to wait for a free chunk (under STALL, or in a DROP writer's grace). */
  long stalls() {
    return stalls;
  }

  /**
   * How long a writer under DROP waits for the service to free a chunk, when it finds none, before
   * it starts dropping (0: drop at once, as upstream's SDK). A writer already dropping does not
   * wait again: it retries without waiting until a chunk is free, and only then may wait next time.
   */
  void dropGraceNanos(long nanos) {
    if (nanos < 0) {
      throw new IllegalArgumentException("negative drop grace: " + nanos);
    }
    dropGraceNanos = nanos;
  }

  long dropGraceNanos() {
    return dropGraceNanos;
  }

  /**
   * The service is gone: writers waiting for a chunk stop waiting and drop, and nothing more will
   * be committed from this buffer.
   */
  void detach() {
    detached = true;
  }

  // ---- writer ids ----

  /**
   * A free writer id in 1..{@link ChunkHeader#MAX_WRITER_ID}, or 0 when all are taken: the first
   * free one after the id handed out last, wrapping around (as upstream's SDK), not lowest first, so
   * that a freed id is taken again only after the others and short-lived threads one after another
   * get sequences of their own in the trace. (A new writer on an id still starts where the id's
   * last writer stopped, {@link #firstChunkId}: the service drops chunk ids it has seen as older.)
   */
  int acquireWriterId() {
    lock.lock();
    try {
      int id = writerIds.nextClearBit(lastWriterId + 1);
      if (id > ChunkHeader.MAX_WRITER_ID) {
        id = writerIds.nextClearBit(1);
      }
      if (id > ChunkHeader.MAX_WRITER_ID) {
        return 0;
      }
      writerIds.set(id);
      lastWriterId = id;
      return id;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Frees writerId, whose writer would have used nextChunkId next: the id's next writer goes on
   * from there ({@link #firstChunkId}). To the service an id names one sequence of chunk ids for
   * as long as the buffer lives; a new writer on a freed id that started again from chunk 0 had its
   * chunks taken for ones older than those already read, and thrown away.
   */
  void releaseWriterId(int writerId, int nextChunkId) {
    lock.lock();
    try {
      writerIds.clear(writerId);
      nextChunkIds[writerId] = nextChunkId;
    } finally {
      lock.unlock();
    }
  }

  /** The chunk id a new writer on writerId starts from: where the id's last writer stopped. */
  int firstChunkId(int writerId) {
    lock.lock();
    try {
      return nextChunkIds[writerId];
    } finally {
      lock.unlock();
    }
  }

  void addWriter(TraceWriter writer) {
    lock.lock();
    try {
      writers[writer.writerId()] = writer;
    } finally {
      lock.unlock();
    }
  }

  void removeWriter(TraceWriter writer) {
    lock.lock();
    try {
      if (writers[writer.writerId()] == writer) {
        writers[writer.writerId()] = null;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes the writers whose thread has ended: commits their chunk, sends UnregisterTraceWriter and
   * frees their id, keeping no reference to them. Without this a thread that traced and ended kept
   * its chunk and its id for good, and after as many threads as the buffer has chunks (or 1023) no
   * new thread could write. Runs where chunks or ids are wanted: before a new writer takes an id,
   * when a writer finds no free chunk, and before a flush. A scan of the live writers under the
   * lock (at most {@link ChunkHeader#MAX_WRITER_ID}, a few microseconds); the closing happens
   * outside it. Any thread may call it; each ended writer is closed by one caller only.
   *
   * @return how many writers it closed
   */
  int closeEndedWriters() {
    List<TraceWriter> ended = null;
    lock.lock();
    try {
      for (int id = writerIds.nextSetBit(1); id > 0; id = writerIds.nextSetBit(id + 1)) {
        TraceWriter w = writers[id];
        if (w != null && w.ownerEnded()) {
          writers[id] = null; // ours to close from here on
          if (ended == null) {
            ended = new ArrayList<>();
          }
          ended.add(w);
        }
      }
    } finally {
      lock.unlock();
    }
    if (ended == null) {
      return 0;
    }
    for (TraceWriter w : ended) {
      w.closeForEndedOwner();
    }
    endedWritersClosed.addAndGet(ended.size());
    return ended.size();
  }

  /** Writers closed so far because their thread had ended. */
  long endedWritersClosed() {
    return endedWritersClosed.get();
  }

  void countLostByEndedWriter(long packets) {
    lostByEndedWriters.addAndGet(packets);
  }

  /**
   * Packets lost by writers whose thread ended while they were dropping, and that found no chunk
   * for the empty packet that would have reported the loss in the trace.
   */
  long packetsLostByEndedWriters() {
    return lostByEndedWriters.get();
  }

  /**
   * Starts committing the current chunk of every live writer whose target buffer passes the
   * filter; the producer thread polls the result until it is done (or gives up), then acks.
   * Writers of ended threads are closed first (their chunks committed at once).
   */
  WriterFlush startWriterFlush(IntPredicate targetBuffers) {
    closeEndedWriters();
    List<TraceWriter> chosen = new ArrayList<>();
    lock.lock();
    try {
      for (TraceWriter w : writers) {
        if (w != null && targetBuffers.test(w.targetBuffer())) {
          chosen.add(w);
        }
      }
    } finally {
      lock.unlock();
    }
    return new WriterFlush(chosen, processBarrier);
  }

  int activeWriters() {
    lock.lock();
    try {
      return writerIds.cardinality();
    } finally {
      lock.unlock();
    }
  }

  CommitSink sink() {
    return sink;
  }

  // ---- chunks ----

  /**
   * A chunk moved to BEING_WRITTEN with the given header, or {@link ChunkHandle#INVALID} when the
   * buffer is exhausted and the policy says drop (or, under STALL, when the service is gone). A
   * writer that is not yet dropping waits out the drop grace first.
   */
  long getNewChunk(int writerId, int chunkId, short packets, BufferExhaustedPolicy policy) {
    return getNewChunk(writerId, chunkId, packets, policy, false);
  }

  /**
   * As {@link #getNewChunk(int, int, short, BufferExhaustedPolicy)}; {@code dropping}: the writer
   * is already dropping (a retry), so under DROP it gets no grace.
   */
  long getNewChunk(int writerId, int chunkId, short packets, BufferExhaustedPolicy policy,
      boolean dropping) {
    long intervalNanos = 0;
    long graceEnd = 0;
    for (int stall = 0; ; stall++) {
      lock.lock();
      try {
        int pages = abi.numPages();
        int start = pageIndex;
        for (int i = 0; i < pages; i++) {
          int page = (start + i) % pages;
          pageIndex = page;
          if (abi.isPageFree(page)) {
            abi.tryPartitionPage(page, DEFAULT_PAGE_LAYOUT);
          }
          int free = abi.getFreeChunks(page);
          for (int idx = 0; free != 0; idx++, free >>>= 1) {
            if ((free & 1) == 0) {
              continue;
            }
            long chunk = abi.tryAcquireChunkForWriting(page, idx, chunkId, writerId, packets);
            if (ChunkHandle.isValid(chunk)) {
              return chunk;
            }
          }
        }
      } finally {
        lock.unlock();
      }
      if (stall == 0 && !dropping && !detached && closeEndedWriters() > 0) {
        // Ended threads' writers held chunks: they are committed now, and the service frees them
        // while this writer waits below.
        requestDrain();
      }
      if (policy == BufferExhaustedPolicy.DROP && !dropping && !detached) {
        // The grace: the service is usually just behind (a burst filled the SMB faster than the
        // commits went out). Sleeping briefly, after pushing out what is held back, gives this
        // thread's core to the threads that free chunks; a core kept busy by a yield loop did not
        // (measured: 1 ms of yields still dropped, 1 ms of 20 us sleeps did not).
        long now = System.nanoTime();
        if (stall == 0) {
          graceEnd = now + dropGraceNanos;
        }
        if (graceEnd - now > 0) {
          stalls++;
          requestDrain();
          pause(DROP_GRACE_PARK_NANOS);
          continue;
        }
      }
      if (policy == BufferExhaustedPolicy.DROP || detached
          || (policy == BufferExhaustedPolicy.STALL_THEN_DROP && stall >= maxStallsBeforeDrop)) {
        if (!detached) {
          requestDrain(); // chunks held back for a batch go now: the service frees them sooner
          if (!Thread.currentThread().isVirtual()) { // a virtual thread's yield unmounts it: see pause
            yieldToService.run();
          }
        }
        return ChunkHandle.INVALID;
      }
      stalls++;
      requestDrain(); // make sure what is complete reaches the service, which frees chunks
      pause(intervalNanos);
      intervalNanos = Math.min(MAX_STALL_INTERVAL_NANOS, (intervalNanos + 1000) * 8);
    }
  }

  /**
   * A writer's wait for a free chunk. A platform thread parks. A virtual thread spins instead: it
   * is in the middle of a packet, on a writer that virtual threads share (TrackEvent's), and parking
   * would unmount it while it holds that writer, so that other virtual threads' events could not
   * use it until this one is mounted again.
   */
  private static void pause(long nanos) {
    if (!Thread.currentThread().isVirtual()) {
      LockSupport.parkNanos(nanos);
      return;
    }
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() - end < 0) {
      Thread.onSpinWait();
    }
  }

  /**
   * Marks chunk COMPLETE and queues it for CommitData with target_buffer, plus the patches at the
   * front of patches that are filled in (they leave the list).
   */
  void returnCompletedChunk(long chunk, int writerId, int targetBuffer, PatchList patches) {
    Drain when;
    long batch;
    lock.lock();
    try {
      int page = abi.releaseChunkAsComplete(chunk);
      if (page == SharedMemoryAbi.INVALID_PAGE) {
        throw new IllegalStateException("chunk not being written on return: " + ChunkHandle.describe(chunk));
      }
      pending.addMove(page, ChunkHandle.chunkIndex(chunk), targetBuffer, ChunkHandle.chunkSize(chunk));
      takePatchesLocked(writerId, targetBuffer, patches);
      when = drainWhenLocked();
      batch = batchesTaken;
    } finally {
      lock.unlock();
    }
    askSink(when, batch);
  }

  /** Queues the filled-in patches at the front of patches (without returning a chunk). */
  void sendPatches(int writerId, int targetBuffer, PatchList patches) {
    Drain when;
    long batch;
    lock.lock();
    try {
      takePatchesLocked(writerId, targetBuffer, patches);
      when = drainWhenLocked();
      batch = batchesTaken;
    } finally {
      lock.unlock();
    }
    askSink(when, batch);
  }

  /** What a writer that queued something asks of the sink. */
  private enum Drain { NONE, NOW, LATE }

  /**
   * A full batch goes now (upstream's batch period is 0 ms: the first item schedules the drain and
   * what arrives before it runs rides along); less waits for one late drain, asked for once.
   */
  private Drain drainWhenLocked() {
    if (drainRequested) {
      return Drain.NONE;
    }
    if (pending.moves >= commitBatchChunks) {
      drainRequested = true;
      return Drain.NOW;
    }
    if (lateDrainScheduled) {
      return Drain.NONE;
    }
    lateDrainScheduled = true;
    return Drain.LATE;
  }

  private void askSink(Drain when, long batch) {
    if (when == Drain.NOW) {
      sink.commitPending();
    } else if (when == Drain.LATE) {
      sink.commitSoon(batch);
    }
  }

  private void takePatchesLocked(int writerId, int targetBuffer, PatchList patches) {
    while (patches.frontIsPatched()) {
      int chunkId = patches.frontChunkId();
      pending.addPatch(writerId, chunkId, targetBuffer, patches.frontOffset(), patches.frontSizeField());
      patches.popFront();
      if (!patches.isEmpty() && patches.frontChunkId() == chunkId && !patches.frontIsPatched()) {
        pending.patchHasMore[pending.patches - 1] = true;
      }
    }
  }

  /** The flush with this id is done on the producer side: ack it with the next CommitData. */
  void notifyFlushComplete(long flushRequestId) {
    lock.lock();
    try {
      pending.flushRequestId = Math.max(pending.flushRequestId, flushRequestId);
      drainRequested = true;
    } finally {
      lock.unlock();
    }
    sink.commitPending();
  }

  /** Asks the sink to drain now if anything is pending (e.g. a writer flushed). */
  void requestDrain() {
    boolean drain;
    lock.lock();
    try {
      drain = !pending.isEmpty() && !drainRequested;
      drainRequested |= drain;
    } finally {
      lock.unlock();
    }
    if (drain) {
      sink.commitPending();
    }
  }

  /**
   * Swaps the pending batch into {@code into} (which must be empty) and returns it; {@code into}'s
   * old arrays become the new pending batch. Called by the sink on its own thread.
   */
  CommitBatch drainTo(CommitBatch into) {
    into.clear();
    lock.lock();
    try {
      return takeLocked(into);
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #drainTo}, for the late drain of batch number batch ({@link CommitSink#commitSoon}):
   * takes the pending batch only if it is still that one, else returns {@code into}, empty. In a
   * burst a writer sends each full batch itself; the late drain asked for by its first chunk then
   * finds the next batch half full, and sending that would halve the batches, from two threads.
   * The batch pending then has a late drain of its own.
   */
  CommitBatch drainLateTo(CommitBatch into, long batch) {
    into.clear();
    lock.lock();
    try {
      return batch == batchesTaken ? takeLocked(into) : into;
    } finally {
      lock.unlock();
    }
  }

  private CommitBatch takeLocked(CommitBatch into) {
    CommitBatch taken = pending;
    pending = into;
    drainRequested = false;
    lateDrainScheduled = false;
    batchesTaken++;
    return taken;
  }
}
