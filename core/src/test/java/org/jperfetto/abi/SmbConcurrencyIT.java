package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several producer threads and one service thread cycling chunks through a real shared file mapping:
 * every chunk written is read exactly once, with its header and payload intact.
 */
class SmbConcurrencyIT {
  private static final PageLayout[] LAYOUTS = {PageLayout.DIV14, PageLayout.DIV7, PageLayout.DIV4};
  private static final int PAYLOAD = 24;

  @TempDir
  Path dir;

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void writersAndAReaderCycleAMillionChunks() throws Exception {
    run(2, 500_000, 64);
  }

  @Test
  @Tag("stress")
  @Timeout(value = 600, unit = TimeUnit.SECONDS)
  void writersAndAReaderCycleManyChunksOnManyPages() throws Exception {
    run(4, 2_500_000, 16);
  }

  private void run(int writers, int chunksPerWriter, int pages) throws Exception {
    Path file = dir.resolve("smb");
    long size = (long) pages * 4096;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
        StandardOpenOption.WRITE); Arena arena = Arena.ofShared()) {
      ch.truncate(size);
      ch.write(java.nio.ByteBuffer.allocate(1), size - 1);
      MemorySegment producerView = ch.map(MapMode.READ_WRITE, 0, size, arena);
      MemorySegment serviceView = ch.map(MapMode.READ_WRITE, 0, size, arena); // a second mapping of the same pages
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicLong writtenSum = new AtomicLong();

      Thread[] threads = new Thread[writers];
      for (int w = 0; w < writers; w++) {
        int writerId = w + 1;
        SharedMemoryAbi abi = new SharedMemoryAbi(producerView, 4096);
        threads[w] = Thread.ofPlatform().name("writer-" + writerId).start(() -> {
          try {
            writtenSum.addAndGet(write(abi, writerId, LAYOUTS[writerId % LAYOUTS.length], chunksPerWriter, failure));
          } catch (Throwable t) {
            failure.compareAndSet(null, t);
          }
        });
      }

      SharedMemoryAbi abi = new SharedMemoryAbi(serviceView, 4096);
      UntrustedChunkReader reader = new UntrustedChunkReader(abi);
      BitSet[] seen = new BitSet[writers + 1];
      for (int w = 1; w <= writers; w++) {
        seen[w] = new BitSet(chunksPerWriter);
      }
      long total = (long) writers * chunksPerWriter;
      long read = 0;
      long readSum = 0;
      try {
        while (read < total && failure.get() == null) {
          long before = read;
          for (int p = 0; p < pages; p++) {
            int complete = PageHeader.chunksInState(abi.headerBitmap(p), ChunkState.COMPLETE.bits());
            for (int c = 0; complete != 0; c++, complete >>>= 1) {
              if ((complete & 1) == 0) {
                continue;
              }
              assertEquals(ChunkReadResult.OK, reader.acquireCommitted(p, c));
              int w = reader.writerId();
              int id = reader.chunkId();
              assertTrue(w >= 1 && w <= writers, "writer " + w);
              assertEquals(1, reader.packetCount());
              assertEquals(1, reader.fragmentsFound());
              assertEquals(1 + PAYLOAD, reader.usedSize(), "a compacted 1-byte size and the payload");
              long pos = reader.payloadOffset() + 1;
              assertEquals(w, serviceView.get(ValueLayout.JAVA_INT_UNALIGNED, pos));
              assertEquals(id, serviceView.get(ValueLayout.JAVA_INT_UNALIGNED, pos + 4));
              long check = serviceView.get(ValueLayout.JAVA_LONG_UNALIGNED, pos + 8);
              assertEquals(mix(w, id), check, "payload of writer " + w + " chunk " + id);
              assertEquals(~check, serviceView.get(ValueLayout.JAVA_LONG_UNALIGNED, pos + 16));
              assertTrue(id >= 0 && id < chunksPerWriter && !seen[w].get(id),
                  "duplicate or bogus chunk " + w + "/" + id);
              seen[w].set(id);
              readSum += check;
              assertEquals(ChunkReadResult.OK, reader.releaseAsFree());
              read++;
            }
          }
          if (read == before) {
            Thread.yield();
          }
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t); // stops the writers too
      } finally {
        for (Thread t : threads) {
          t.join();
        }
      }
      if (failure.get() != null) {
        throw new AssertionError("chunk cycling failed", failure.get());
      }
      assertEquals(total, read);
      for (int w = 1; w <= writers; w++) {
        assertEquals(chunksPerWriter, seen[w].cardinality(), "chunks of writer " + w);
      }
      assertEquals(writtenSum.get(), readSum, "checksums");
      for (int p = 0; p < pages; p++) {
        assertTrue(abi.isPageFree(p), "page " + p + " back to NOT_PARTITIONED");
      }
    }
  }

  /** Writes {@code n} one-fragment chunks; returns the sum of their checksums. */
  private static long write(SharedMemoryAbi abi, int writerId, PageLayout layout, int n,
      AtomicReference<Throwable> failure) {
    MemorySegment smb = abi.segment();
    long sum = 0;
    int page = writerId;
    for (int id = 0; id < n; id++) {
      long chunk = ChunkHandle.INVALID;
      while (chunk == ChunkHandle.INVALID) {
        if (failure.get() != null) {
          return sum;
        }
        page = (page + 1) % abi.numPages();
        if (abi.isPageFree(page)) {
          abi.tryPartitionPage(page, layout);
        }
        int free = abi.getFreeChunks(page);
        if (free == 0) {
          if (page == writerId % abi.numPages()) {
            Thread.yield(); // went round a full SMB: let the reader run (the test machine may be busy)
          }
          continue;
        }
        chunk = abi.tryAcquireChunkForWriting(page, Integer.numberOfTrailingZeros(free), id, writerId, (short) 0);
      }
      abi.incrementPacketCount(chunk);
      long pos = abi.payloadOffset(chunk);
      long check = mix(writerId, id);
      smb.set(ValueLayout.JAVA_INT_UNALIGNED, pos + 4, writerId);
      smb.set(ValueLayout.JAVA_INT_UNALIGNED, pos + 8, id);
      smb.set(ValueLayout.JAVA_LONG_UNALIGNED, pos + 12, check);
      smb.set(ValueLayout.JAVA_LONG_UNALIGNED, pos + 20, ~check);
      PacketFragments.compact(smb, pos, PAYLOAD);
      sum += check;
      if (abi.releaseChunkAsComplete(chunk) == SharedMemoryAbi.INVALID_PAGE) {
        throw new IllegalStateException("complete failed: " + ChunkHandle.describe(chunk));
      }
    }
    return sum;
  }

  private static long mix(int writer, int id) {
    long x = ((long) writer << 32) ^ id ^ 0x9E3779B97F4A7C15L;
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }
}
