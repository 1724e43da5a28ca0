package org.jperfetto.producer;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.PacketFragment;
import org.jperfetto.producer.proto.PatchList;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.producer.proto.ScatteredStreamWriter;
import org.jperfetto.protos.TracePacket;

/**
 * Writes TracePackets of one sequence (one writer id, one target buffer) straight into chunks of the
 * shared memory buffer. One thread uses a writer; nothing in it allocates per packet.
 *
 * <p>{@link #newTracePacket()} returns the same {@link ProtoWriter} every time, positioned at a new
 * packet; the packet ends at {@link #finishTracePacket()}, at the next {@code newTracePacket()}, or
 * at {@link #flush()}. Each packet is a fragment with a size header that is 1 byte when it is under
 * 127 bytes and stayed in its chunk, 4 bytes otherwise; a packet that outgrows its chunk goes on in
 * the next one (continue flags), and sizes of nested messages left in a chunk already handed back
 * go to the service as patches (needs-patching flag). Packet counts and flags are published with
 * release stores.
 *
 * <p>When the buffer is exhausted under {@link BufferExhaustedPolicy#DROP} the writer writes into a
 * private scratch chunk; a packet cut off that way gets the drop marker as its size, and the next
 * packet that reaches a real chunk carries {@code previous_packet_dropped}, so the service and
 * trace_processor report the loss instead of decoding garbage.
 */
public final class TraceWriter implements AutoCloseable {
  /** Leave room for one more count: a finished packet inflates the count before the next starts. */
  static final int MAX_PACKETS_PER_CHUNK = ChunkHeader.MAX_PACKET_COUNT - 1;
  /** Smallest room worth starting a packet in: its size header plus a few bytes. */
  private static final int MIN_PACKET_ROOM = PacketFragments.SIZE_FIELD_BYTES + 8;
  private static final int GARBAGE_CHUNK_SIZE = 1024;
  private static final int DATA_LOSS_SMB_FULL = TracePacket.DataLossReason.DATA_LOSS_PRESENT_VALUE
      | TracePacket.DataLossReason.DATA_LOSS_SMB_FULL_VALUE;

  private final SharedMemoryArbiter arbiter;
  private final SharedMemoryAbi abi;
  private final MemorySegment smb;
  private final int writerId;
  private final int targetBuffer;
  private final BufferExhaustedPolicy policy;
  private final ScatteredStreamWriter stream;
  private final PatchList patches = new PatchList();
  private final ProtoWriter packet;
  private final PacketFragment fragment;
  private final MemorySegment garbage;
  /** Lets a flush commit this writer's chunk while its thread is between packets. */
  final FlushHandshake handshake = new FlushHandshake();
  /**
   * The thread this writer serves, or null for a writer not tied to a thread (its user closes it).
   * Once that thread has ended the arbiter may close the writer ({@link #closeForEndedOwner}).
   */
  private final Thread owner;

  private long chunk = ChunkHandle.INVALID;
  // The writer owns its chunk's header: it keeps count and flags here and publishes both with one
  // release store of the packets u16 (no read-modify-write of shared memory per packet).
  private long chunkHeader;
  private int chunkCount;
  private int chunkFlags;
  private int chunkId;
  private int nextChunkId;
  private boolean packetOpen;
  private boolean fragmenting;
  private boolean dropPackets;
  private boolean retryNewChunkAfterPacket;
  private boolean reachedMaxPackets;
  private boolean countInflated;
  private boolean firstPacketOnSequence = true;
  /** Whether a packet of this writer has reached a chunk of the buffer (not the scratch chunk). */
  private boolean landed;
  private boolean closed;
  private long dropEvents;
  /** Set on dropping, cleared by {@link #acknowledgeLoss}: small-packet claims stay closed meanwhile. */
  private boolean lossUnacknowledged;
  private long droppedPackets;
  /** {@link #droppedPackets} when a packet last landed after a loss (the losses it reported). */
  private long droppedWhenLanded;
  private long packetsWritten;

  TraceWriter(SharedMemoryArbiter arbiter, int writerId, int targetBuffer, BufferExhaustedPolicy policy) {
    this(arbiter, writerId, targetBuffer, policy, null);
  }

  TraceWriter(SharedMemoryArbiter arbiter, int writerId, int targetBuffer, BufferExhaustedPolicy policy,
      Thread owner) {
    if (writerId <= 0 || writerId > ChunkHeader.MAX_WRITER_ID) {
      throw new IllegalArgumentException("writer id out of range: writer=" + writerId);
    }
    this.arbiter = arbiter;
    this.abi = arbiter.abi();
    this.smb = abi.segment();
    this.writerId = writerId;
    this.targetBuffer = targetBuffer;
    this.policy = java.util.Objects.requireNonNull(policy, "policy");
    this.stream = new ScatteredStreamWriter(w -> nextRange());
    this.packet = new ProtoWriter(stream, patches);
    this.fragment = new PacketFragment(stream);
    this.garbage = Arena.ofAuto().allocate(GARBAGE_CHUNK_SIZE, 8);
    this.owner = owner;
    this.nextChunkId = arbiter.firstChunkId(writerId);
    arbiter.addWriter(this); // last: publishes the constructed writer to flushes
  }

  /**
   * A writer on a fresh writer id of arbiter, registered with the service for targetBuffer.
   *
   * @throws IllegalStateException if every writer id is taken
   */
  static TraceWriter create(SharedMemoryArbiter arbiter, int targetBuffer, BufferExhaustedPolicy policy) {
    return create(arbiter, targetBuffer, policy, null);
  }

  /**
   * As {@link #create(SharedMemoryArbiter, int, BufferExhaustedPolicy)}, for the thread owner (null:
   * none). A new writer first has the writers of ended threads closed, so that their chunks and ids
   * come back however many threads come and go.
   *
   * @throws IllegalStateException if every writer id is taken by a writer whose thread is alive
   */
  static TraceWriter create(SharedMemoryArbiter arbiter, int targetBuffer, BufferExhaustedPolicy policy,
      Thread owner) {
    arbiter.closeEndedWriters();
    int id = arbiter.acquireWriterId();
    if (id == 0) {
      throw new IllegalStateException("no free trace writer id (max " + ChunkHeader.MAX_WRITER_ID + ")");
    }
    arbiter.sink().registerTraceWriter(id, targetBuffer);
    return new TraceWriter(arbiter, id, targetBuffer, policy, owner);
  }

  /** Whether the thread this writer served has ended (never for a writer without one). */
  boolean ownerEnded() {
    Thread t = owner;
    return t != null && !t.isAlive();
  }

  /**
   * Closes the writer of a thread that ended, on another thread: as the owner would have at its
   * end. Its thread having ended, everything it wrote happens-before this (Thread.isAlive). A writer
   * that was dropping when its thread ended first tries to land one empty packet that carries
   * previous_packet_dropped, so that the loss shows in the trace as any other sequence's; when no
   * chunk is free for it either, the loss counts in {@link SharedMemoryArbiter#packetsLostByEndedWriters}.
   */
  void closeForEndedOwner() {
    if (closed) {
      return;
    }
    if (dropPackets) {
      long lost = droppedPackets - droppedWhenLanded;
      retryNewChunkAfterPacket = true;
      newTracePacket();
      finishTracePacket();
      if (dropPackets) {
        arbiter.countLostByEndedWriter(lost);
      }
    }
    close();
  }

  /**
   * Leaves first_packet_on_sequence out of the first packet: for replaying the middle of a sequence
   * (tests comparing with upstream's chunks).
   */
  void continueSequence() {
    firstPacketOnSequence = false;
  }

  /** This writer's id in chunk headers (the sequence the service sees). */
  public int writerId() {
    return writerId;
  }

  /** The service buffer the packets go to. */
  public int targetBuffer() {
    return targetBuffer;
  }

  /** Times the writer found the buffer exhausted and started dropping. */
  public long dropEvents() {
    return dropEvents;
  }

  /**
   * Whether packets were lost since the last {@link #acknowledgeLoss}: the sequence's incremental
   * state (interned strings, the delta clock) may now lie in lost packets. trace_processor ignores a
   * sequence's packets that need incremental state from the first loss on, until a packet clears it;
   * a writer of such packets answers with a new incremental state, then acknowledges. Meanwhile
   * {@link #beginSmallPacket} declines, so that no short packet built on the old state slips in.
   */
  public boolean lossUnacknowledged() {
    return lossUnacknowledged;
  }

  /**
   * Whether the next packet may land in the buffer: the writer is not dropping, or it is and will
   * ask for a chunk again at the next packet (its scratch chunk is used up). The moment to write a
   * new incremental state after a loss, which otherwise goes where the dropped packets went.
   */
  public boolean nextPacketMayLand() {
    return !dropPackets || retryNewChunkAfterPacket || stream.bytesAvailable() < MIN_PACKET_ROOM;
  }

  /**
   * Ends {@link #lossUnacknowledged()} if the writer is writing to the buffer again (not dropping);
   * returns whether it did. Called by the writer's thread after it wrote a new incremental state.
   */
  public boolean acknowledgeLoss() {
    if (dropPackets) {
      return false;
    }
    lossUnacknowledged = false;
    if (ChunkHandle.isValid(chunk)) {
      stream.openClaims();
    }
    return true;
  }

  /** Packets begun while dropping, plus packets cut off when the buffer ran out (lost packets). */
  public long droppedPackets() {
    return droppedPackets;
  }

  /** Packets begun (dropped ones included). */
  public long packetsWritten() {
    return packetsWritten;
  }

  /**
   * Starts a TracePacket (finishing the previous one if it is still open) and returns the writer
   * for its fields. The same object is returned every time: do not keep it across packets.
   */
  public ProtoWriter newTracePacket() {
    if (closed) {
      throw new IllegalStateException("trace writer closed: writer=" + writerId);
    }
    handshake.enter(this); // busy until finishTracePacket
    if (packetOpen) {
      finishPacket();
    }
    finalizeFragment();
    fragmenting = false;
    boolean wasDropping = dropPackets;
    if (stream.bytesAvailable() < MIN_PACKET_ROOM || reachedMaxPackets || retryNewChunkAfterPacket) {
      nextRange();
    }
    if (patches.frontIsPatched()) {
      arbiter.sendPatches(writerId, targetBuffer, patches);
    }
    if (wasDropping && !dropPackets && !landed) {
      writeLossLead();
    }
    packet.reset();
    fragment.begin();
    fragmenting = true;
    packetOpen = true;
    packetsWritten++;
    if (!dropPackets) {
      landed = true;
      if (countInflated) {
        countInflated = false; // the count already includes this packet
      } else {
        chunkCount++;
        publishPackets();
      }
      reachedMaxPackets = chunkCount == MAX_PACKETS_PER_CHUNK;
      if (wasDropping) {
        packet.appendVarInt(TracePacket.PREVIOUS_PACKET_DROPPED_FIELD_NUMBER, DATA_LOSS_SMB_FULL);
        droppedWhenLanded = droppedPackets;
      }
    } else {
      droppedPackets++;
    }
    if (firstPacketOnSequence) {
      packet.appendBool(TracePacket.FIRST_PACKET_ON_SEQUENCE_FIELD_NUMBER, true);
      firstPacketOnSequence = false;
    }
    return packet;
  }

  /**
   * The first packet of a writer that lost packets before it ever had a chunk: a packet of its own
   * ahead of the one that carries previous_packet_dropped. trace_processor counts that mark
   * (traced_buf_sequence_packet_loss) on every packet of a sequence but the first it sees, since
   * the service marks each sequence's first packet whatever came before; on the first packet the
   * loss would be reported nowhere. This one carries the mark too (it must carry something: the
   * service skips empty packets), so it says the same and keeps the next one's countable. The
   * caller is in a fresh chunk, so both fit.
   */
  private void writeLossLead() {
    packet.reset();
    fragment.begin();
    fragmenting = true;
    packetOpen = true;
    chunkCount++;
    publishPackets();
    packet.appendVarInt(TracePacket.PREVIOUS_PACKET_DROPPED_FIELD_NUMBER, DATA_LOSS_SMB_FULL);
    finishPacket(); // inflates the count for the packet that follows
    landed = true;
  }

  /**
   * Claims room in the current chunk for a whole packet of exactly length bytes (under 127) that
   * the caller encodes itself with a {@link ChunkPacketEncoder} into {@link #chunkMemory()} at the
   * returned offset: its 1-byte size header first, then the packet (as upstream compacts a small
   * packet's size). Finishes the open packet, if any, first. Returns -1, claiming nothing, when
   * something else is due first (first packet of the sequence, dropping, a full chunk) or the
   * packet and the encoder's slack do not fit: the caller may then try {@link
   * #beginSmallPacketInNextChunk}, or write the same packet through {@link #newTracePacket()}.
   * After a claim the caller encodes the packet and calls {@link #endSmallPacket()} at once, on
   * this thread.
   */
  public long beginSmallPacket(int length) {
    // Not "if (packetOpen)" here: the test inside is one every event's end takes both ways, while
    // here an open packet is rare in a burst (a packet the event's sequence or track needed first)
    // and a test of its own, never seen taken, would be left out of the compiled trace point.
    finishTracePacket();
    // Busy while the chunk is written, like a regular packet: a flush must not take the chunk now.
    // Entering may answer a pending flush by handing the chunk back, so the checks come after it.
    handshake.enter(this);
    if (refusesSmallPacket(length)) {
      handshake.exit();
      return -1;
    }
    // The size byte and the packet, then the encoder's slack (which also leaves the byte that the
    // next packet's size needs, so a full chunk is never left with zero bytes of room). The claim
    // also declines in the states the regular path must handle: no chunk yet (the sequence's first
    // packet), none after a flush or close, and the scratch chunk while dropping (claims closed).
    // They share the branch of a full chunk, taken every few hundred packets, on purpose: a test of
    // its own would be one the JIT never saw taken before the SMB first fills, and taking it then
    // would throw the compiled trace point away in the middle of the burst that filled it.
    long at = claimSmallPacket(length);
    if (at < 0) {
      handshake.exit();
    }
    return at;
  }

  /**
   * After {@link #beginSmallPacket} declined: takes the next chunk, as the regular path would for
   * this packet, and claims there, so that a burst of small packets stays off the regular path at
   * chunk boundaries (taken once per chunk, it would otherwise be what the JIT profiles and compiles
   * in the middle of an app's first burst). The few bytes left in the full chunk stay unused.
   * Returns -1, claiming nothing, in the states only the regular path handles: the sequence's first
   * packet, dropping (the first packet after it carries the loss marker), a closed writer, the
   * chunk's packet count at its cap, a packet too large, and no chunk to be had (the regular path
   * then drops the packet). Otherwise as {@link #beginSmallPacket}.
   */
  public long beginSmallPacketInNextChunk(int length) {
    handshake.enter(this); // may hand the chunk to a pending flush: the checks come after it
    long at = -1;
    if (!closed && !firstPacketOnSequence && !dropPackets && !lossUnacknowledged && !retryNewChunkAfterPacket
        && !packetOpen && !refusesSmallPacket(length)) {
      nextRange();
      if (!dropPackets) {
        at = claimSmallPacket(length);
      }
    }
    if (at < 0) {
      handshake.exit();
    }
    return at;
  }

  /** Whether a small packet of length bytes must go the regular way whatever room the chunk has. */
  private boolean refusesSmallPacket(int length) {
    return reachedMaxPackets || fragment.isOpen() || length > PacketFragments.MAX_COMPACT_SIZE;
  }

  /** Claims the size byte, the packet and the encoder's slack in the current range; -1 if they do not fit. */
  private long claimSmallPacket(int length) {
    return stream.tryClaim(length + 1, ChunkPacketEncoder.SLACK);
  }

  /** Where {@link #beginSmallPacket} packets are encoded: the shared memory buffer. */
  public MemorySegment chunkMemory() {
    return stream.segment();
  }

  /** Publishes the packet claimed by {@link #beginSmallPacket}, which is now fully written. */
  public void endSmallPacket() {
    packetsWritten++;
    if (countInflated) {
      countInflated = false; // the count already includes this packet
    } else {
      chunkCount++;
    }
    reachedMaxPackets = chunkCount == MAX_PACKETS_PER_CHUNK;
    // Finished at once: inflate the count for the next packet, as finishTracePacket does.
    countInflated = true;
    chunkCount++;
    publishPackets();
    handshake.exit();
  }

  /** Room left in the current chunk (for tests of the small-packet path's boundaries). */
  long bytesLeftInChunk() {
    return stream.bytesAvailable();
  }

  /**
   * Ends the current packet: closes its open nested messages and writes its size. The count of the
   * chunk is raised right away (as upstream's writer does) so a service scraping the chunk before
   * it is complete sees the packet; a packet started later in the same chunk reuses that count.
   */
  public void finishTracePacket() {
    if (!packetOpen) {
      return;
    }
    finishPacket();
    handshake.exit();
  }

  private void finishPacket() {
    packet.endAllNested();
    finalizeFragment();
    packetOpen = false;
    fragmenting = false;
    if (ChunkHandle.isValid(chunk) && !countInflated) {
      if (stream.bytesAvailable() < 1) {
        returnCompletedChunk();
      } else {
        countInflated = true;
        chunkCount++;
        publishPackets();
      }
    }
    if (patches.frontIsPatched()) {
      arbiter.sendPatches(writerId, targetBuffer, patches);
    }
  }

  /**
   * Finishes the open packet, hands the current chunk back and asks for a CommitData soon. The next
   * packet starts in a new chunk.
   */
  public void flush() {
    if (closed) {
      return;
    }
    handshake.enter(this);
    commitChunkForFlush();
    handshake.exit();
    arbiter.requestDrain();
  }

  /**
   * Ends the open packet and hands the chunk back; the next packet starts in a new chunk. Run by
   * the writer's thread, or by a flush that owns the writer through {@link #handshake}.
   */
  void commitChunkForFlush() {
    if (packetOpen) {
      finishPacket();
    }
    if (ChunkHandle.isValid(chunk)) {
      returnCompletedChunk();
    }
    stream.reset(MemorySegment.NULL, 0, 0);
  }

  /** Flushes, then gives the writer id back (UnregisterTraceWriter). Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    flush();
    closed = true;
    arbiter.removeWriter(this);
    arbiter.releaseWriterId(writerId, nextChunkId);
    arbiter.sink().unregisterTraceWriter(writerId);
  }

  private void finalizeFragment() {
    if (fragment.isOpen()) {
      fragment.end();
    }
  }

  private void returnCompletedChunk() {
    if (countInflated) {
      // The inflated count names a packet that never started: make it an empty one.
      long p = stream.writePtr();
      if (stream.segment() != smb || stream.bytesAvailable() < 1) {
        throw new IllegalStateException("no room for the inflated packet: writer=" + writerId
            + " " + ChunkHandle.describe(chunk));
      }
      smb.set(JAVA_BYTE, p, (byte) 0);
      stream.setWritePtr(p + 1);
      countInflated = false;
    }
    long c = chunk;
    chunk = ChunkHandle.INVALID;
    arbiter.returnCompletedChunk(c, writerId, targetBuffer, patches);
  }

  /** The stream's delegate: the current range is full (or there is none yet). */
  private void nextRange() {
    if (fragmenting && dropPackets) {
      // Mid-packet in the scratch chunk: wrap around in it, and try the buffer again only when the
      // packet is over, since its start is lost anyway.
      retryNewChunkAfterPacket = true;
      if (fragment.isOpen()) {
        fragment.endAtChunkBoundary(); // writes into the scratch chunk: harmless
      }
      packet.discardSizeFields(garbage, 0, garbage.byteSize());
      stream.reset(garbage, 0, garbage.byteSize());
      stream.closeClaims();
      return;
    }
    short packets = fragmenting
        ? ChunkHeader.packets(1, ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
        : ChunkHeader.packets(0, 0);
    BufferExhaustedPolicy effective =
        policy == BufferExhaustedPolicy.STALL_THEN_DROP && dropPackets ? BufferExhaustedPolicy.DROP : policy;
    long next = arbiter.getNewChunk(writerId, nextChunkId, packets, effective, dropPackets);
    if (!ChunkHandle.isValid(next)) {
      enterDropMode();
      return;
    }
    if (fragmenting) {
      // The packet goes on in the new chunk: close this fragment with a 4-byte size and move the
      // size fields of open nested messages that lie in the old chunk to the patch list.
      chunkFlags |= ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK;
      fragment.endAtChunkBoundary();
      if (packet.redirectSizeFields(smb, abi.payloadOffset(chunk), chunkEnd(chunk), chunkId) > 0) {
        chunkFlags |= ChunkHeader.CHUNK_NEEDS_PATCHING;
      }
      publishPackets();
    }
    if (ChunkHandle.isValid(chunk)) {
      returnCompletedChunk();
    }
    dropPackets = false;
    reachedMaxPackets = false;
    retryNewChunkAfterPacket = false;
    countInflated = false;
    chunk = next;
    chunkId = nextChunkId++;
    chunkHeader = abi.chunkOffset(next);
    chunkCount = ChunkHeader.packetCount(packets);
    chunkFlags = ChunkHeader.packetFlags(packets);
    long begin = abi.payloadOffset(next);
    long end = chunkEnd(next);
    if (fragmenting) {
      smb.set(JAVA_INT_UNALIGNED, begin, 0);
      stream.reset(smb, begin + PacketFragments.SIZE_FIELD_BYTES, end);
      fragment.beginContinuation(smb, begin);
    } else {
      stream.reset(smb, begin, end);
    }
    if (lossUnacknowledged) {
      stream.closeClaims();
    }
  }

  private void enterDropMode() {
    if (fragmenting) {
      // The packet started in a real chunk and cannot go on: mark its fragment so the service throws
      // the packet away, and forget sizes that lie in that chunk (no patch for a dropped packet).
      if (fragment.isOpen()) {
        fragment.endAsDropped();
      }
      if (ChunkHandle.isValid(chunk)) {
        packet.discardSizeFields(smb, abi.payloadOffset(chunk), chunkEnd(chunk));
      }
      droppedPackets++;
    }
    if (ChunkHandle.isValid(chunk)) {
      returnCompletedChunk();
    }
    if (!dropPackets) {
      dropEvents++;
    }
    dropPackets = true;
    lossUnacknowledged = true;
    countInflated = false;
    reachedMaxPackets = false;
    retryNewChunkAfterPacket = false;
    stream.reset(garbage, 0, garbage.byteSize());
    stream.closeClaims();
  }

  /** Release store of the chunk's count and flags: whoever acquires them sees the bytes before. */
  private void publishPackets() {
    ChunkHeader.PACKETS.setRelease(smb, chunkHeader, ChunkHeader.packets(chunkCount, chunkFlags));
  }

  private long chunkEnd(long c) {
    return abi.chunkOffset(c) + ChunkHandle.chunkSize(c);
  }

  @Override
  public String toString() {
    return "TraceWriter(writer=" + writerId + " target_buffer=" + targetBuffer + " policy=" + policy + ")";
  }
}
