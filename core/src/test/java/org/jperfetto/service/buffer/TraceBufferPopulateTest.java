package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A buffer on lazily committed memory has it committed a little ahead of its writes, in steps. */
class TraceBufferPopulateTest {
  private static final int PAYLOAD = 4000;

  /** Memory that records what it is asked to commit ahead; refuses when told to. */
  private static final class RecordingMemory implements BufferMemory {
    final List<long[]> calls = new ArrayList<>();
    final boolean refuse;

    RecordingMemory(boolean refuse) {
      this.refuse = refuse;
    }

    @Override
    public MemorySegment allocate(long size, Arena arena) {
      return arena.allocate(size, 64);
    }

    @Override
    public boolean populate(MemorySegment buffer, long offset, long length) {
      calls.add(new long[] {offset, length});
      return !refuse;
    }
  }

  /** One chunk payload: a single packet fragment filling it (2-byte size, then its bytes). */
  private static MemorySegment payload(Arena arena) {
    MemorySegment src = arena.allocate(PAYLOAD);
    int packet = PAYLOAD - 2;
    src.set(ValueLayout.JAVA_BYTE, 0, (byte) (packet & 0x7F | 0x80));
    src.set(ValueLayout.JAVA_BYTE, 1, (byte) (packet >>> 7));
    return src;
  }

  private static void write(TraceBuffer tb, MemorySegment src, int chunkId) {
    tb.copyChunkUntrusted(1, 0, 0, 1, chunkId, 1, 0, true, src, 0, PAYLOAD);
  }

  @Test
  void memoryIsCommittedAheadOfEveryWriteInContiguousPageAlignedSteps() {
    long size = 8L << 20;
    RecordingMemory memory = new RecordingMemory(false);
    long record = ChunkRecord.recordSizeFor(PAYLOAD);
    try (Arena arena = Arena.ofConfined();
        TraceBuffer tb = TraceBuffer.create(size, OverwritePolicy.DISCARD, memory)) {
      MemorySegment src = payload(arena);
      assertEquals(0, memory.calls.size(), "nothing is committed before the first write");
      long written = 0;
      for (int id = 0; written + record <= size; id++) {
        write(tb, src, id);
        written += record;
        long end = 0;
        for (long[] c : memory.calls) {
          assertEquals(end, c[0], "each step starts where the last ended");
          assertEquals(0, c[0] % 4096, "page aligned");
          assertTrue(c[1] >= TraceBuffer.POPULATE_STEP || c[0] + c[1] == size, "a step of at least 64 pages");
          end = c[0] + c[1];
        }
        assertTrue(end >= Math.min(size, written + TraceBuffer.POPULATE_LEAD) - TraceBuffer.POPULATE_STEP,
            "committed ahead of the write position: " + end + " for " + written);
        assertTrue(end >= written && end <= size, "never behind the writes, never past the buffer");
      }
      long[] last = memory.calls.get(memory.calls.size() - 1);
      assertEquals(size, last[0] + last[1], "the whole buffer was committed by the time it was full");
      assertTrue(memory.calls.size() <= size / TraceBuffer.POPULATE_STEP + 1,
          "one call per step, not per page: " + memory.calls.size());
    }
  }

  @Test
  void aRingBufferThatWrappedAsksForNothingMore() {
    long size = 2L << 20;
    RecordingMemory memory = new RecordingMemory(false);
    try (Arena arena = Arena.ofConfined();
        TraceBuffer tb = TraceBuffer.create(size, OverwritePolicy.RING_BUFFER, memory)) {
      MemorySegment src = payload(arena);
      int id = 0;
      for (; id < 2 * size / PAYLOAD; id++) { // about twice round
        write(tb, src, id);
      }
      int calls = memory.calls.size();
      long[] last = memory.calls.get(calls - 1);
      assertEquals(size, last[0] + last[1]);
      for (int more = 0; more < 1000; more++, id++) {
        write(tb, src, id);
      }
      assertEquals(calls, memory.calls.size(), "after a wrap all of it is committed");
    }
  }

  @Test
  void memoryThatCannotCommitAheadIsAskedOnceAndTheBufferWorksAsBefore() {
    long size = 4L << 20;
    RecordingMemory memory = new RecordingMemory(true);
    try (Arena arena = Arena.ofConfined();
        TraceBuffer tb = TraceBuffer.create(size, OverwritePolicy.DISCARD, memory)) {
      MemorySegment src = payload(arena);
      for (int id = 0; id < 500; id++) {
        write(tb, src, id);
      }
      assertEquals(1, memory.calls.size(), "asked once");
      assertEquals(500, PacketReader.readAll(tb).size(), "every chunk's packet reads back");
    }
  }
}
