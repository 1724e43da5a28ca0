package org.jperfetto.service.buffer;

import static org.jperfetto.abi.ChunkHeader.CHUNK_NEEDS_PATCHING;
import static org.jperfetto.abi.ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK;
import static org.jperfetto.abi.ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PacketFragments;

/**
 * The service's central trace buffer: chunks copied out of producers' shared memory are stored
 * here until a consumer reads them (upstream's TraceBufferV1, same observable behaviour and
 * counters).
 *
 * <h2>Writing</h2>
 * {@link #copyChunkUntrusted} appends a record (16-byte header + chunk payload, rounded up to 16
 * bytes) at the write position, wrapping at the end of the buffer. Records that the new one
 * covers are deleted whole (RING_BUFFER) or, if any of them is unread, the write is refused and
 * the buffer stops accepting new chunks (DISCARD). A chunk is named by {producer id, writer id,
 * chunk id}; copying a chunk that is already here replaces it in place (a scraped incomplete chunk
 * later committed with more fragments).
 *
 * <h2>Reading</h2>
 * {@link #beginRead()} then {@link #readNextTracePacket} until it returns false. Packets of one
 * sequence come out in chunk-id order (ids wrap at 2^32), each once; packets of different
 * sequences interleave freely. A fragmented packet is returned only when all its chunks are here,
 * contiguous and patched; until then that sequence is paused while the others go on. Fragments
 * whose beginning is lost are skipped and the next packet is flagged previous-packet-dropped.
 * That flag is kept until a packet of the sequence is returned, across empty packets and read
 * passes (V1 forgets it when an empty packet lies between the loss and a packet that has to
 * wait for its next chunk; V2, which keeps it per sequence, does not).
 * Reads are destructive.
 *
 * <h2>Trust</h2>
 * Producer, uid and pid are trusted (the service knows them from the socket). Everything else,
 * and every byte of the payload, comes from the producer: the payload is copied first and parsed
 * only in this buffer's own memory, every offset is bounds-checked, and violations are counted in
 * {@link TraceBufferStats#abiViolations()} rather than thrown.
 *
 * <h2>Threads</h2>
 * Not thread-safe: the service calls every method from its one service thread. Copying or
 * patching between {@link #beginRead()} and the end of the read is allowed; the read then starts
 * over from the first sequence (packets already returned are not returned again).
 */
public final class TraceBuffer implements AutoCloseable {
  /** Receives the writers of a buffer, see {@link #forEachWriter}. */
  @FunctionalInterface
  public interface WriterVisitor {
    void visit(int producerId, int writerId);
  }

  /** Buffer sizes are whole 4 KiB pages, as upstream requires. */
  public static final long PAGE_SIZE = 4096;

  private static final int HDR = ChunkRecord.HEADER_SIZE;

  private final Arena arena;
  private final BufferMemory memory;
  private final MemorySegment buf;
  private final long size;
  private final long maxRecordSize;
  private final OverwritePolicy policy;
  private final ChunkTable chunks;
  private final Sequences sequences;

  private long writePos;
  /** Bytes from 0 that {@link BufferMemory#populate} committed (or that need no populating). */
  private long populatedUpTo;
  /** Bytes written before the first wrap (upstream's used_size): what a copy needs to take. */
  private long usedSize;
  private boolean discardWrites;
  private boolean readOnly;
  private boolean hasData;
  private boolean closed;

  // Read cursor: a sequence and a logical position in it (-1: at its end).
  private int readSeq;
  private int readPos;
  /** Gaps crossed in the current sequence (bounded by its size), and whether one just was. */
  private int walkSteps;
  private boolean crossedGap;
  private long modCount;
  private long readModCount;

  // Counters (names of TraceStats.BufferStats).
  private long bytesWritten;
  private long bytesOverwritten;
  private long bytesRead;
  private long paddingBytesWritten;
  private long paddingBytesCleared;
  private long chunksWritten;
  private long chunksRewritten;
  private long chunksOverwritten;
  private long chunksDiscarded;
  private long chunksRead;
  private final WriterStats writerStats = new WriterStats();
  private long chunksCommittedOutOfOrder;
  private long writeWrapCount;
  private long patchesSucceeded;
  private long patchesFailed;
  private long readaheadsSucceeded;
  private long readaheadsFailed;
  private long abiViolations;
  private long traceWriterPacketLoss;

  private TraceBuffer(long size, OverwritePolicy policy, ChunkTable chunks, Sequences sequences,
      BufferMemory memory) {
    this.arena = Arena.ofShared();
    this.memory = memory;
    try {
      this.buf = memory.allocate(size, arena);
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
    this.size = size;
    this.maxRecordSize = Math.min(size, ChunkRecord.MAX_SIZE);
    this.policy = policy;
    this.chunks = chunks;
    this.sequences = sequences;
    this.readSeq = -1;
    this.readPos = -1;
  }

  /**
   * A new, empty buffer of sizeBytes (off-heap, zeroed; freed by {@link #close()}).
   *
   * @throws IllegalArgumentException if sizeBytes is not a positive multiple of 4096
   */
  public static TraceBuffer create(long sizeBytes, OverwritePolicy policy) {
    return create(sizeBytes, policy, BufferMemory.ZEROED);
  }

  /**
   * A new, empty buffer of sizeBytes in memory from {@code memory} (freed by {@link #close()}).
   *
   * @throws IllegalArgumentException if sizeBytes is not a positive multiple of 4096
   * @throws OutOfMemoryError or another RuntimeException of memory's when it cannot be had
   */
  public static TraceBuffer create(long sizeBytes, OverwritePolicy policy, BufferMemory memory) {
    if (sizeBytes <= 0 || sizeBytes % PAGE_SIZE != 0) {
      throw new IllegalArgumentException(
          "trace buffer size must be a positive multiple of " + PAGE_SIZE + ": size=" + sizeBytes);
    }
    int expectedChunks = (int) Math.min(1 << 16, sizeBytes / PAGE_SIZE);
    return new TraceBuffer(sizeBytes, java.util.Objects.requireNonNull(policy, "policy"),
        new ChunkTable(expectedChunks), new Sequences(), memory);
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /**
   * Copies one chunk's payload from shared memory into the buffer.
   *
   * @param producerId trusted producer id (0..65535)
   * @param uid trusted uid of the producer
   * @param pid trusted pid of the producer
   * @param writerId writer id from the chunk header (untrusted, 16 bits)
   * @param chunkId chunk id from the chunk header (untrusted, unsigned 32 bits)
   * @param numFragments the header's packet count (untrusted)
   * @param chunkFlags the header's flags (untrusted, 6 bits)
   * @param chunkComplete whether the chunk was Complete; if not (scraped on flush), its last
   *     fragment is ignored, and reading its sequence will not go past it until it is copied
   *     again complete
   * @param src the memory holding the payload (the SMB); its contents may change while copying
   * @param srcOffset where the payload starts: just after the 8-byte chunk header
   * @param size payload size: chunk size minus the 8-byte chunk header
   */
  public void copyChunkUntrusted(int producerId, int uid, int pid, int writerId, int chunkId,
      int numFragments, int chunkFlags, boolean chunkComplete, MemorySegment src, long srcOffset,
      long size) {
    copyChunkUntrusted(producerId, uid, pid, 0, writerId, chunkId, numFragments, chunkFlags,
        chunkComplete, src, srcOffset, size);
  }

  /**
   * {@link #copyChunkUntrusted(int, int, int, int, int, int, int, boolean, MemorySegment, long, long)}
   * for a producer on another machine: {@code machineId} (trusted, from the transport; 0 for this
   * machine) is kept with the chunk and read back with its packets.
   */
  public void copyChunkUntrusted(int producerId, int uid, int pid, int machineId, int writerId,
      int chunkId, int numFragments, int chunkFlags, boolean chunkComplete, MemorySegment src,
      long srcOffset, long size) {
    checkWritable();
    if (producerId < 0 || producerId > 0xFFFF) {
      throw new IllegalArgumentException("producer id out of range: producer=" + producerId);
    }
    writerId &= 0xFFFF;
    numFragments &= 0xFFFF;
    int flags = chunkFlags & ChunkHeader.PACKET_FLAGS_MASK;
    if (size < 0 || srcOffset < 0 || srcOffset > src.byteSize() - size) {
      abiViolations++;
      return;
    }
    long recordSize = ChunkRecord.recordSizeFor(size);
    if (recordSize > maxRecordSize) {
      abiViolations++;
      return;
    }
    hasData = true;
    modCount++;
    if (!chunkComplete && numFragments > 0) {
      // The writer may still be writing the last fragment: keep only the finished ones.
      numFragments--;
      flags &= ~(LAST_PACKET_CONTINUES_ON_NEXT_CHUNK | CHUNK_NEEDS_PATCHING);
    }

    Sequence seq = sequences.getOrCreate(producerId, writerId);
    int pos = seq.find(chunkId);
    if (pos >= 0) {
      rewriteChunk(seq, pos, numFragments, flags, chunkComplete, src, srcOffset, size, recordSize);
      return;
    }
    boolean readmit = false;
    if (seq.wasReachedByReader(chunkId)) {
      // Committed after the reader got to it: a late chunk whose packets can no longer come out
      // in order, or a scraped chunk read in part and overwritten before this final commit,
      // whose packets would come out twice. V1 returns them anyway; like upstream's V2 we drop
      // them, except the unread rest of that scraped chunk, which is admitted again.
      readmit = seq.canReadmit(chunkId, numFragments);
      if (!readmit) {
        chunksDiscarded++;
        return;
      }
    }
    if (discardWrites) {
      discard();
      return;
    }
    long gap = makeRoom(recordSize);
    if (gap < 0) {
      discard();
      return;
    }
    long at = writePos;
    if (at + recordSize + POPULATE_LEAD > populatedUpTo) {
      populateAhead(at + recordSize);
    }
    writeRecord(at, chunkId, producerId, writerId, numFragments, flags, src, srcOffset, size,
        recordSize);
    int slot = index(seq, chunkId, at, numFragments, flags, chunkComplete, uid, pid, machineId);
    if (readmit) {
      chunks.fragmentsRead[slot] = seq.evictedFragmentsRead;
      chunks.nextFragmentOffset[slot] = seq.evictedNextFragmentOffset;
      chunks.setLastReadSkipped(slot, seq.evictedLastReadSkipped);
      seq.evictedFragmentsRead = -1;
    }
    chunksWritten++;
    bytesWritten += recordSize;
    writePos += recordSize;
    usedSize = Math.max(usedSize, writePos);
    if (writePos == this.size) {
      writePos = 0;
      writeWrapCount++;
    }
    if (gap > 0) {
      writePadding(writePos, gap);
    }
    // Chunks may arrive out of order: the newest id is the one ahead by less than half the id
    // space (so that 0 after 0xFFFFFFFF counts as newer).
    if (Integer.compareUnsigned(chunkId - seq.lastChunkIdWritten, Integer.MAX_VALUE) < 0) {
      seq.lastChunkIdWritten = chunkId;
    } else {
      chunksCommittedOutOfOrder++;
    }
  }

  /**
   * Frees recordSize bytes at the write position, wrapping (and padding the end) if they do not
   * fit before the end. Returns the gap left after them to pad, or -1 if DISCARD refuses.
   */
  private long makeRoom(long recordSize) {
    long toEnd = size - writePos;
    if (recordSize > toEnd) {
      if (clearRecords(writePos, toEnd) < 0) {
        return -1;
      }
      writePadding(writePos, toEnd);
      writePos = 0;
      writeWrapCount++;
    }
    return clearRecords(writePos, recordSize);
  }

  private int index(Sequence seq, int chunkId, long recordOffset, int numFragments, int flags,
      boolean complete, int uid, int pid, int machineId) {
    int slot = chunks.allocate();
    chunks.recordOffset[slot] = recordOffset;
    chunks.numFragments[slot] = numFragments;
    chunks.fragmentsRead[slot] = 0;
    chunks.nextFragmentOffset[slot] = 0;
    chunks.flags[slot] = (byte) flags;
    chunks.state[slot] = complete ? ChunkTable.COMPLETE : 0;
    chunks.uid[slot] = uid;
    chunks.pid[slot] = pid;
    chunks.machine[slot] = machineId;
    // makeRoom may have deleted chunks of this sequence: look the place up again.
    seq.insert(-seq.find(chunkId) - 1, chunkId, slot);
    return slot;
  }

  private void rewriteChunk(Sequence seq, int pos, int numFragments, int flags, boolean complete,
      MemorySegment src, long srcOffset, long size, long recordSize) {
    int slot = seq.slotAt(pos);
    long at = chunks.recordOffset[slot];
    int prevFragments = chunks.numFragments[slot];
    int prevFlags = chunks.flags[slot];
    // The chunk's size is fixed by the page layout; fragments and flags only ever grow.
    if (ChunkRecord.size(buf, at) != recordSize || prevFragments > numFragments
        || (prevFlags & flags) != prevFlags) {
      abiViolations++;
      return;
    }
    if (prevFragments == numFragments) {
      // Nothing new to copy. (Upstream leaves completeness alone here; a chunk scraped empty and
      // then committed empty would then block its sequence forever, so record completion.)
      if (complete) {
        chunks.setComplete(slot, true);
      }
      return;
    }
    if (seq.isBehindReader(seq.idAt(pos))) {
      // The reader already moved on to a later chunk: new packets here would come out of order.
      abiViolations++;
      return;
    }
    if (chunks.fragmentsRead[slot] > prevFragments) {
      abiViolations++;
      return;
    }
    chunks.numFragments[slot] = numFragments;
    chunks.flags[slot] = (byte) flags;
    chunks.setComplete(slot, complete);
    writeRecord(at, seq.idAt(pos), seq.producerId, seq.writerId, numFragments, flags, src,
        srcOffset, size, recordSize);
    chunksRewritten++;
  }

  /** How far ahead of the write position lazily committed memory is committed in advance. */
  static final long POPULATE_LEAD = 1 << 20;
  /** The least committed in advance at a time: 64 pages per call instead of a fault per page. */
  static final long POPULATE_STEP = 256 << 10;

  /**
   * Commits the memory from {@link #populatedUpTo} to {@link #POPULATE_LEAD} past end (at least a
   * {@link #POPULATE_STEP}), so that the copies into it take no page faults: on a VM those were a
   * quarter of the loop thread's time in a burst. Small steps: a large one would be a long pause of
   * the loop, and a pause longer than the producer's SMB lasts loses data. After a wrap everything
   * is committed.
   */
  private void populateAhead(long end) {
    long from = populatedUpTo;
    if (from >= size) {
      return;
    }
    long to = Math.min(size, (Math.max(end + POPULATE_LEAD, from + POPULATE_STEP) + PAGE_SIZE - 1) & -PAGE_SIZE);
    populatedUpTo = memory.populate(buf, from, to - from) ? to : size;
  }

  private void writeRecord(long at, int chunkId, int producerId, int writerId, int numFragments,
      int flags, MemorySegment src, long srcOffset, long size, long recordSize) {
    ChunkRecord.writeChunk(buf, at, chunkId, producerId, writerId, numFragments, flags, recordSize);
    MemorySegment.copy(src, srcOffset, buf, at + HDR, size);
    for (long p = at + HDR + size, end = at + recordSize; p < end; p++) {
      buf.set(ValueLayout.JAVA_BYTE, p, (byte) 0); // at most 15 bytes of rounding
    }
  }

  private void writePadding(long at, long recordSize) {
    ChunkRecord.writePadding(buf, at, recordSize);
    paddingBytesWritten += recordSize;
  }

  private void discard() {
    discardWrites = true;
    chunksDiscarded++;
  }

  /**
   * Deletes every record that starts in [from, from + length). Returns how far the last deleted
   * record reaches past the range (the gap to pad), 0 when the range ends in never-written
   * memory, or -1 (deleting nothing) when the policy is DISCARD and an unread chunk is in the way.
   */
  private long clearRecords(long from, long length) {
    long end = from + length;
    if (policy == OverwritePolicy.DISCARD) {
      for (long p = from; p < end; ) {
        long rs = recordSizeAt(p);
        if (rs == 0) {
          break;
        }
        if (ChunkRecord.kind(buf, p) == ChunkRecord.KIND_CHUNK) {
          int slot = slotOfRecord(p);
          if (chunks.fragmentsRead[slot] < chunks.numFragments[slot]) {
            return -1;
          }
        }
        p += rs;
      }
    }
    long p = from;
    while (p < end) {
      long rs = recordSizeAt(p);
      if (rs == 0) {
        return 0; // never written from here on
      }
      if (ChunkRecord.kind(buf, p) == ChunkRecord.KIND_CHUNK) {
        deleteChunkRecord(p, rs);
      } else {
        paddingBytesCleared += rs;
      }
      p += rs;
    }
    return p - end;
  }

  private void deleteChunkRecord(long at, long recordSize) {
    Sequence seq = sequenceOfRecord(at);
    int pos = positionOfRecord(seq, at);
    int slot = seq.slotAt(pos);
    if (chunks.fragmentsRead[slot] < chunks.numFragments[slot]) {
      chunksOverwritten++;
      bytesOverwritten += recordSize;
    }
    if (!chunks.isComplete(slot) && chunks.fragmentsRead[slot] > 0
        && seq.hasRead && seq.idAt(pos) == seq.newestChunkIdRead) {
      seq.evictedFragmentsRead = chunks.fragmentsRead[slot];
      seq.evictedNextFragmentOffset = chunks.nextFragmentOffset[slot];
      seq.evictedLastReadSkipped = chunks.lastReadSkipped(slot);
    }
    seq.remove(pos);
    chunks.release(slot);
  }

  private int slotOfRecord(long at) {
    Sequence seq = sequenceOfRecord(at);
    return seq.slotAt(positionOfRecord(seq, at));
  }

  private Sequence sequenceOfRecord(long at) {
    Sequence seq = sequences.get(ChunkRecord.producerId(buf, at), ChunkRecord.writerId(buf, at));
    if (seq == null) {
      throw new IllegalStateException("trace buffer record of an unknown sequence: offset=" + at);
    }
    return seq;
  }

  /** Records in the buffer and the index always agree; a record missing from it is our bug. */
  private int positionOfRecord(Sequence seq, long at) {
    int pos = seq.find(ChunkRecord.chunkId(buf, at));
    if (pos < 0) {
      throw new IllegalStateException("trace buffer record not in the index: offset=" + at);
    }
    return pos;
  }

  /** Size of the record at p; 0 for never-written memory. Our own headers: a bad one is a bug. */
  private long recordSizeAt(long p) {
    long rs = ChunkRecord.size(buf, p);
    if ((rs != 0 && rs < HDR) || (rs & (HDR - 1)) != 0 || p + rs > size) {
      throw new IllegalStateException("trace buffer record chain broken: offset=" + p + " size=" + rs);
    }
    return rs;
  }

  // ---------------------------------------------------------------------------------------------
  // Patching

  /**
   * Applies out-of-band patches to a chunk still in the buffer, if it belongs to this producer.
   * The batch is applied whole or not at all.
   *
   * @param producerId trusted id of the producer asking; only its own chunks can be patched
   * @param otherPatchesPending if false, the chunk stops needing patches and becomes readable
   * @return true if the chunk was found and every patch was in bounds and 4 bytes long
   */
  public boolean tryPatchChunkContents(int producerId, int writerId, int chunkId,
      List<Patch> patches, boolean otherPatchesPending) {
    return tryPatchChunkContents(producerId, writerId, chunkId, PatchBatch.of(patches), otherPatchesPending);
  }

  /** As {@link #tryPatchChunkContents(int, int, int, List, boolean)}, the patches in a batch. */
  public boolean tryPatchChunkContents(int producerId, int writerId, int chunkId,
      PatchBatch patches, boolean otherPatchesPending) {
    checkWritable();
    Sequence seq = sequences.get(producerId, writerId & 0xFFFF);
    int pos = seq == null || writerId != (writerId & 0xFFFF) ? -1 : seq.find(chunkId);
    if (pos < 0) {
      patchesFailed++;
      return false;
    }
    int slot = seq.slotAt(pos);
    long at = chunks.recordOffset[slot];
    long payloadSize = ChunkRecord.size(buf, at) - HDR;
    int n = patches.count();
    for (int i = 0; i < n; i++) {
      long off = patches.offsetAt(i);
      if (patches.lengthAt(i) != Patch.SIZE || off < 0
          || payloadSize < Patch.SIZE || off > payloadSize - Patch.SIZE) {
        patchesFailed++;
        return false;
      }
    }
    modCount++;
    for (int i = 0; i < n; i++) {
      MemorySegment.copy(patches.sourceAt(i), patches.sourceOffsetAt(i), buf, at + HDR + patches.offsetAt(i),
          Patch.SIZE);
    }
    patchesSucceeded += n;
    if (!otherPatchesPending) {
      int flags = chunks.flags[slot] & ~CHUNK_NEEDS_PATCHING;
      chunks.flags[slot] = (byte) flags;
      ChunkRecord.setFlags(buf, at, flags);
    }
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** Starts a read pass from the first sequence. */
  public void beginRead() {
    checkOpen();
    readSeq = -1;
    readPos = -1;
    crossedGap = false;
    readModCount = modCount;
  }

  /**
   * Reads the next whole packet into out.
   *
   * @return false if no packet can be read now (all sequences are exhausted or waiting for
   *     chunks or patches); out is then empty
   */
  public boolean readNextTracePacket(BufferedPacket out) {
    checkOpen();
    if (readModCount != modCount) {
      beginRead();
    }
    out.reset(buf);
    boolean dropped = true;
    for (; ; readPos = advance(readSeq, readPos)) {
      if (readPos < 0) {
        // This sequence has nothing more to give: go to the next one that has chunks.
        do {
          if (readSeq + 1 >= sequences.count()) {
            readSeq = sequences.count();
            return false;
          }
          readSeq++;
          readPos = startOf(sequences.at(readSeq));
          walkSteps = 0;
          crossedGap = false;
        } while (readPos < 0);
        dropped = true;
      }
      Sequence seq = sequences.at(readSeq);
      int slot = seq.slotAt(readPos);
      if ((chunks.flags[slot] & CHUNK_NEEDS_PATCHING) != 0) {
        readPos = -1; // the sequence waits here for its patches
        continue;
      }
      if (crossedGap) {
        crossedGap = false;
        dropped = true; // what was in the gap may have been lost unread
      }
      if (chunks.fragmentsRead[slot] > 0) {
        dropped = chunks.lastReadSkipped(slot);
      }
      while (chunks.fragmentsRead[slot] < chunks.numFragments[slot]) {
        int flags = chunks.flags[slot];
        boolean first = chunks.fragmentsRead[slot] == 0;
        boolean last = chunks.fragmentsRead[slot] == chunks.numFragments[slot] - 1;
        if (first && (flags & FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) != 0) {
          // The beginning of this packet is gone (or was skipped): drop the rest of it.
          readFragment(slot, null);
          chunks.setLastReadSkipped(slot, true);
          dropped = true;
          continue;
        }
        if (!last || (flags & LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) == 0) {
          int r = readFragment(slot, out);
          if (r == FRAGMENT_OK) {
            out.setSequence(seq.producerId, chunks.uid[slot], chunks.pid[slot], chunks.machine[slot],
                seq.writerId, dropped);
            return true;
          }
          if (r == FRAGMENT_EMPTY) {
            // Nothing to return yet: a loss seen before this empty packet is still unreported,
            // and the reader may stop in this chunk (a packet waiting for its next chunk) before
            // it returns one. Keep it in the chunk, where the next read pass picks it up.
            chunks.setLastReadSkipped(slot, dropped);
            continue;
          }
          chunks.setLastReadSkipped(slot, true); // bad fragment: the rest of the chunk is dropped
          dropped = true;
          break;
        }
        int uid = chunks.uid[slot];
        int pid = chunks.pid[slot];
        int machine = chunks.machine[slot];
        int r = readAhead(seq, out);
        if (r == READAHEAD_OK) {
          readaheadsSucceeded++;
          out.setSequence(seq.producerId, uid, pid, machine, seq.writerId, dropped);
          return true;
        }
        if (r == READAHEAD_WAIT) {
          readaheadsFailed++;
          readPos = -1; // come back to this sequence on the next read pass
          break;
        }
        // A fragment of the glued packet was bad: the cursor now sits on its last chunk.
        slot = seq.slotAt(readPos);
        chunks.setLastReadSkipped(slot, true);
        dropped = true;
      }
    }
  }

  private static final int FRAGMENT_OK = 0;
  private static final int FRAGMENT_EMPTY = 1;
  private static final int FRAGMENT_INVALID = 2;

  private static final int READAHEAD_OK = 0;
  private static final int READAHEAD_WAIT = 1;
  private static final int READAHEAD_CORRUPT = 2;

  /** Where reading a sequence starts: the chunk after the newest id written, wrapping; -1 if empty. */
  private static int startOf(Sequence seq) {
    int n = seq.size();
    if (n == 0) {
      return -1;
    }
    int p = seq.firstAfter(seq.lastChunkIdWritten);
    return p == n ? 0 : p;
  }

  /**
   * Where the reader goes after the chunk at pos: the next chunk as {@link #moveNext} says, or
   * across a gap of ids that can never be read any more. Such a gap is left by chunks deleted
   * after the reader got past them (a chunk committed out of order sits at a newer place in the
   * buffer than its successors, and outlives them); chunks arriving into it are dropped (see
   * copyChunkUntrusted). Upstream stops at any gap, which can stall a sequence for good.
   */
  private int advance(int seqIndex, int pos) {
    int next = moveNext(seqIndex, pos);
    if (next >= 0 || pos < 0) {
      return next;
    }
    Sequence seq = sequences.at(seqIndex);
    int id = seq.idAt(pos);
    if (id == seq.lastChunkIdWritten || !chunks.isComplete(seq.slotAt(pos))
        || ++walkSteps > seq.size()) {
      return -1;
    }
    next = pos + 1 == seq.size() ? 0 : pos + 1;
    int nextId = seq.idAt(next);
    if (nextId - id > 0 && seq.wasReachedByReader(nextId - 1)) {
      crossedGap = true;
      return next;
    }
    return -1;
  }

  /**
   * The chunk after pos in sequence seqIndex if reading may go on to it: pos is complete, is not
   * the newest chunk, and the next chunk id is here. Otherwise -1.
   */
  private int moveNext(int seqIndex, int pos) {
    if (pos < 0) {
      return -1;
    }
    Sequence seq = sequences.at(seqIndex);
    int id = seq.idAt(pos);
    if (id == seq.lastChunkIdWritten || !chunks.isComplete(seq.slotAt(pos))) {
      return -1;
    }
    int next = pos + 1 == seq.size() ? 0 : pos + 1;
    return seq.idAt(next) == id + 1 ? next : -1;
  }

  /**
   * The last fragment of the chunk at the read cursor continues on the next chunks: if they are
   * all here (contiguous, patched), glue the packet, leave the cursor on the chunk holding its
   * last fragment and return READAHEAD_OK.
   */
  private int readAhead(Sequence seq, BufferedPacket out) {
    int expected = seq.idAt(readPos) + 1;
    int end = moveNext(readSeq, readPos);
    for (; end >= 0; end = moveNext(readSeq, end), expected++) {
      int slot = seq.slotAt(end);
      if (chunks.numFragments[slot] == 0) {
        continue;
      }
      int flags = chunks.flags[slot];
      if (seq.idAt(end) != expected || (flags & FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) == 0
          || (flags & CHUNK_NEEDS_PATCHING) != 0) {
        return READAHEAD_WAIT;
      }
      if (chunks.numFragments[slot] == 1 && (flags & LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) != 0) {
        continue; // a middle chunk: the packet goes on
      }
      boolean corrupt = false;
      for (; ; readPos = moveNext(readSeq, readPos)) {
        int s = seq.slotAt(readPos);
        if (chunks.numFragments[s] > 0) {
          corrupt |= readFragment(s, out) == FRAGMENT_INVALID;
        }
        if (readPos == end) {
          break;
        }
      }
      if (corrupt) {
        out.clearSlices();
        return READAHEAD_CORRUPT;
      }
      return READAHEAD_OK;
    }
    return READAHEAD_WAIT;
  }

  /**
   * Takes the next fragment out of a chunk, adding its bytes to out (unless out is null: skip).
   * A fragment that does not fit in its chunk makes the whole chunk read (its remaining fragments
   * are lost): an ABI violation, or packet loss when its size is the drop marker.
   */
  private int readFragment(int slot, BufferedPacket out) {
    long record = chunks.recordOffset[slot];
    long recordEnd = record + ChunkRecord.size(buf, record);
    long payload = record + HDR;
    long p = payload + chunks.nextFragmentOffset[slot];
    sequences.at(readSeq).noteRead(ChunkRecord.chunkId(buf, record));
    if (chunks.fragmentsRead[slot] >= chunks.numFragments[slot] || p >= recordEnd) {
      abiViolations++; // more fragments declared than the chunk holds
      return markChunkBad(slot);
    }
    long decoded = PacketFragments.decodeSize(buf, p, recordEnd);
    long fragmentSize = decoded < 0 ? 0 : PacketFragments.size(decoded);
    long data = decoded < 0 ? -1 : p + PacketFragments.headerBytes(decoded);
    if (data < 0 || data + fragmentSize > recordEnd) {
      if (data >= 0 && fragmentSize == PacketFragments.DROP_PACKET_MARKER) {
        traceWriterPacketLoss++; // the writer gave up on this packet
      } else {
        abiViolations++;
      }
      return markChunkBad(slot);
    }
    long next = data + fragmentSize;
    chunks.nextFragmentOffset[slot] = (int) (next - payload);
    chunks.fragmentsRead[slot]++;
    if (chunks.fragmentsRead[slot] == chunks.numFragments[slot] && chunks.isComplete(slot)) {
      chunksRead++;
      bytesRead += recordEnd - record;
      Sequence seq = sequences.at(readSeq);
      writerStats.add(seq.producerId, seq.writerId, chunks.nextFragmentOffset[slot]);
    }
    chunks.setLastReadSkipped(slot, false);
    if (fragmentSize == 0) {
      return FRAGMENT_EMPTY;
    }
    if (out != null) {
      out.addSlice(data, (int) fragmentSize);
    }
    return FRAGMENT_OK;
  }

  private int markChunkBad(int slot) {
    chunks.nextFragmentOffset[slot] = 0;
    chunks.fragmentsRead[slot] = chunks.numFragments[slot];
    if (chunks.isComplete(slot)) {
      chunksRead++;
      long record = chunks.recordOffset[slot];
      bytesRead += ChunkRecord.size(buf, record);
    }
    return FRAGMENT_INVALID;
  }

  // ---------------------------------------------------------------------------------------------
  // Clone, stats, lifecycle

  /**
   * A read-only copy for CloneSession: same contents, chunks and read positions (upstream's
   * behaviour since 2025-10); the read counters start at zero. Copying into or patching the copy
   * throws IllegalStateException.
   */
  public TraceBuffer copy() {
    checkOpen();
    TraceBuffer c = new TraceBuffer(size, policy, new ChunkTable(chunks), new Sequences(sequences), memory);
    MemorySegment.copy(buf, 0, c.buf, 0, usedSize);
    c.writePos = writePos;
    c.usedSize = usedSize;
    c.discardWrites = discardWrites;
    c.readOnly = true;
    c.hasData = hasData;
    c.bytesWritten = bytesWritten;
    c.bytesOverwritten = bytesOverwritten;
    c.paddingBytesWritten = paddingBytesWritten;
    c.paddingBytesCleared = paddingBytesCleared;
    c.chunksWritten = chunksWritten;
    c.chunksRewritten = chunksRewritten;
    c.chunksOverwritten = chunksOverwritten;
    c.chunksDiscarded = chunksDiscarded;
    c.chunksCommittedOutOfOrder = chunksCommittedOutOfOrder;
    c.writeWrapCount = writeWrapCount;
    c.patchesSucceeded = patchesSucceeded;
    c.patchesFailed = patchesFailed;
    c.abiViolations = abiViolations;
    c.traceWriterPacketLoss = traceWriterPacketLoss;
    return c;
  }

  /** How full each writer's chunks were, as read so far (TraceStats.writer_stats). */
  public WriterStats writerStats() {
    return writerStats;
  }

  /** Refuses further copies and patches (they throw IllegalStateException). */
  public void setReadOnly() {
    readOnly = true;
  }

  public boolean isReadOnly() {
    return readOnly;
  }

  public TraceBufferStats stats() {
    return new TraceBufferStats(size, bytesWritten, bytesOverwritten, bytesRead,
        paddingBytesWritten, paddingBytesCleared, chunksWritten, chunksRewritten, chunksOverwritten,
        chunksDiscarded, chunksRead, chunksCommittedOutOfOrder, writeWrapCount, patchesSucceeded,
        patchesFailed, readaheadsSucceeded, readaheadsFailed, abiViolations, traceWriterPacketLoss);
  }

  public long size() {
    return size;
  }

  /** Bytes of the buffer written at least once (grows until the first wrap, then stays at size). */
  public long usedSize() {
    return usedSize;
  }

  public OverwritePolicy overwritePolicy() {
    return policy;
  }

  /** True once any chunk was offered to the buffer. */
  public boolean hasData() {
    return hasData;
  }

  /**
   * Every {producer, writer} sequence that has written into this buffer, in (producer, writer)
   * order: what the trace's provenance packet lists per buffer.
   */
  public void forEachWriter(WriterVisitor visitor) {
    for (int i = 0; i < sequences.count(); i++) {
      Sequence seq = sequences.at(i);
      visitor.visit(seq.producerId, seq.writerId);
    }
  }

  /** Frees the memory. Packets read before must not be used after this. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      arena.close();
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("trace buffer is closed");
    }
  }

  private void checkWritable() {
    checkOpen();
    if (readOnly) {
      throw new IllegalStateException("trace buffer is read-only (a clone)");
    }
  }
}
