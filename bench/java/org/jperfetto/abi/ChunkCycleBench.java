package org.jperfetto.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jperfetto.wire.Varints;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * One chunk's life, producer and service side on the same thread: acquire for writing, write a 1 KiB
 * fragment, complete, acquire for reading through the untrusted reader, copy it out, free.
 * {@code cycle}: one thread. {@code cycleTwoThreads}: two threads on their own pages of one SMB.
 * {@code cycleTwoThreadsSamePage}: two threads on the two chunks of the same Div2 pages, so every
 * transition CASes a header word the other thread is also changing.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ChunkCycleBench {
  private static final int PAGE_SIZE = 4096;
  private static final int PAGES = 64;
  private static final int PACKET = 1024;

  @State(Scope.Benchmark)
  public static class Smb {
    Arena arena;
    SharedMemoryAbi abi;

    @Setup(Level.Trial)
    public void setUp() {
      arena = Arena.ofShared();
      abi = new SharedMemoryAbi(arena.allocate((long) PAGES * PAGE_SIZE, PAGE_SIZE), PAGE_SIZE);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      arena.close();
    }
  }

  @State(Scope.Thread)
  public static class Side {
    Arena arena;
    UntrustedChunkReader reader;
    MemorySegment packet;
    MemorySegment copy;
    int thread;
    int threads;
    int next;
    int chunkId;

    @Setup(Level.Trial)
    public void setUp(Smb smb, ThreadParams params) {
      arena = Arena.ofConfined();
      reader = new UntrustedChunkReader(smb.abi);
      packet = arena.allocate(PACKET);
      packet.fill((byte) 0x5A);
      copy = arena.allocate(PAGE_SIZE);
      thread = params.getThreadIndex();
      threads = params.getThreadCount();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      arena.close();
    }
  }

  @Benchmark
  @Threads(1)
  public int cycle(Smb smb, Side side) {
    return cycleOn(smb.abi, side, ownPage(side), PageLayout.DIV1, 0);
  }

  @Benchmark
  @Threads(2)
  public int cycleTwoThreads(Smb smb, Side side) {
    return cycleOn(smb.abi, side, ownPage(side), PageLayout.DIV1, 0);
  }

  @Benchmark
  @Threads(2)
  public int cycleTwoThreadsSamePage(Smb smb, Side side) {
    int page = side.next++ & (PAGES - 1);
    return cycleOn(smb.abi, side, page, PageLayout.DIV2, side.thread & 1);
  }

  private static int ownPage(Side side) {
    int slot = side.next++ & (PAGES / side.threads - 1);
    return slot * side.threads + side.thread;
  }

  private static int cycleOn(SharedMemoryAbi abi, Side side, int page, PageLayout layout, int chunkIdx) {
    long chunk = ChunkHandle.INVALID;
    for (int attempt = 0; chunk == ChunkHandle.INVALID; attempt++) {
      // On a shared page the other thread may free its chunk and un-partition the page in between.
      if (abi.isPageFree(page)) {
        abi.tryPartitionPage(page, layout);
      }
      chunk = abi.tryAcquireChunkForWriting(page, chunkIdx, side.chunkId++, 1, (short) 0);
      if (attempt == 1000) {
        throw new IllegalStateException("no chunk: page=" + page + " chunk=" + chunkIdx);
      }
    }
    MemorySegment smb = abi.segment();
    long pos = abi.payloadOffset(chunk);
    abi.incrementPacketCount(chunk);
    MemorySegment.copy(side.packet, 0, smb, pos + PacketFragments.SIZE_FIELD_BYTES, PACKET);
    Varints.writeRedundant(smb, pos, PACKET);
    abi.releaseChunkAsComplete(chunk);

    UntrustedChunkReader reader = side.reader;
    if (reader.acquireCommitted(page, chunkIdx) != ChunkReadResult.OK) {
      throw new IllegalStateException("commit failed: page=" + page + " chunk=" + chunkIdx);
    }
    int used = reader.usedSize();
    MemorySegment.copy(smb, reader.payloadOffset(), side.copy, 0, used);
    reader.releaseAsFree();
    return used;
  }
}
