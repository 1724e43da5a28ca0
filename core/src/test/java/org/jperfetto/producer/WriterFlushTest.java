package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jperfetto.os.Membarrier;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TestEvent;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.wire.ProtoWire;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A flush commits every covered writer's current chunk before it is acked: writers between
 * packets (idle threads) through the flusher, writers inside a packet at their next entry.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WriterFlushTest {
  private static final int PAGE = 4096;

  static void packet(TraceWriter w, long timestamp) {
    w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, timestamp);
    w.finishTracePacket();
  }

  /** Timestamps of the packets the service has of writer (all of them: reads accumulate). */
  static List<Long> timestamps(TestSink sink, TraceWriter w) throws Exception {
    List<Long> out = new ArrayList<>();
    for (ServiceSide.Read r : sink.service.readAll()) {
      if (r.writerId() == w.writerId()) {
        out.add(TracePacket.parseFrom(r.data()).getTimestamp());
      }
    }
    return out;
  }

  @Test
  void idleWriterChunkIsCompletedByTheFlusher() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 8, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      for (int i = 0; i < 3; i++) {
        packet(w, i);
      }
      sink.drain();
      assertEquals(List.of(), timestamps(sink, w), "the chunk is still being written: nothing committed");
      WriterFlush f = sink.arbiter.startWriterFlush(b -> true);
      assertTrue(f.tookIdleWriters());
      assertTrue(f.poll(), "a writer between packets is taken at once");
      assertEquals(FlushHandshake.NONE, w.handshake.claim());
      sink.drain();
      assertEquals(List.of(0L, 1L, 2L), timestamps(sink, w));
      assertEquals(1, sink.service.chunksMoved);

      packet(w, 3); // goes on in a new chunk
      packet(w, 4);
      assertTrue(sink.arbiter.startWriterFlush(b -> true).poll());
      sink.drain();
      assertEquals(List.of(0L, 1L, 2L, 3L, 4L), timestamps(sink, w));
      assertEquals(2, sink.service.chunksMoved);

      assertTrue(sink.arbiter.startWriterFlush(b -> true).poll(), "nothing held: nothing to do");
      w.close();
      sink.drain();
      assertEquals(List.of(0L, 1L, 2L, 3L, 4L), timestamps(sink, w));
      assertEquals(0, sink.service.badChunks);
    }
  }

  @Test
  void writerInsideAPacketIsNotTakenUntilThePacketEnds() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 8, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      packet(w, 0);
      ProtoWriter open = w.newTracePacket();
      open.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, 1);
      WriterFlush f = sink.arbiter.startWriterFlush(b -> true);
      assertTrue(w.handshake.isBusy());
      assertFalse(f.poll());
      assertFalse(f.poll());
      assertEquals(1, f.remaining());
      sink.drain();
      assertEquals(0, sink.service.chunksMoved, "a chunk in use is never taken");
      open.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, 2); // the writer goes on undisturbed
      w.finishTracePacket();
      assertTrue(f.poll(), "taken once the packet ended");
      sink.drain();
      assertEquals(List.of(0L, 1L), timestamps(sink, w));
      assertEquals(2, TracePacket.parseFrom(sink.service.readAll().get(1).data()).getSequenceFlags());
    }
  }

  @Test
  void writerInsideAPacketCommitsItselfAtItsNextPacket() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 8, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, 0);
      WriterFlush f = sink.arbiter.startWriterFlush(b -> true);
      assertFalse(f.poll() && f.tookIdleWriters());
      w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, 1); // ends packet 0, answers
      assertEquals(FlushHandshake.NONE, w.handshake.claim());
      assertTrue(f.poll());
      sink.drain();
      assertEquals(List.of(0L), timestamps(sink, w), "packet 0's chunk committed, packet 1 in a new one");
      w.finishTracePacket();
      w.flush();
      sink.drain();
      assertEquals(List.of(0L, 1L), timestamps(sink, w));
      assertEquals(2, sink.service.chunksMoved);
    }
  }

  @Test
  void withoutAProcessBarrierIdleWritersAreOnlyAsked() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 8, PAGE, 1 << 20, () -> false)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      packet(w, 0);
      WriterFlush f = sink.arbiter.startWriterFlush(b -> true);
      assertFalse(f.tookIdleWriters());
      assertTrue(f.poll(), "nothing to wait for: the ack goes out, the service scrapes");
      sink.drain();
      assertEquals(List.of(), timestamps(sink, w), "an idle writer is never touched without the barrier");
      assertEquals(FlushHandshake.REQUESTED, w.handshake.claim());
      packet(w, 1); // the writer answers when it comes back
      assertEquals(FlushHandshake.NONE, w.handshake.claim());
      sink.drain();
      assertEquals(List.of(0L), timestamps(sink, w));
    }
  }

  @Test
  void onlyWritersOfTheFlushedBuffersAreCommitted() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 8, PAGE, 1 << 20)) {
      TraceWriter one = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.STALL);
      TraceWriter two = TraceWriter.create(sink.arbiter, 2, BufferExhaustedPolicy.STALL);
      packet(one, 10);
      packet(two, 20);
      WriterFlush f = sink.arbiter.startWriterFlush(b -> b == 2);
      assertTrue(f.poll());
      sink.drain();
      assertEquals(List.of(), timestamps(sink, one));
      assertEquals(List.of(20L), timestamps(sink, two));
      assertEquals(FlushHandshake.NONE, one.handshake.claim(), "never asked");
      two.close();
      assertEquals(0, sink.arbiter.startWriterFlush(b -> b == 2).remaining(), "a closed writer is forgotten");
      one.close();
    }
  }

  @Test
  void userFlushCommitsAtOnce() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 8, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, 7);
      w.flush(); // the open packet too
      assertEquals(List.of(7L), timestamps(sink, w));
      w.close();
    }
  }

  @Test
  void packetsOfAParkedThreadArriveOnFlush() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 8, PAGE, 1 << 20)) {
      int n = 500;
      CountDownLatch written = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicReference<TraceWriter> writer = new AtomicReference<>();
      Thread t = Thread.ofPlatform().start(() -> {
        TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
        writer.set(w);
        for (int i = 0; i < n; i++) {
          packet(w, i);
        }
        written.countDown();
        try {
          release.await(); // idle, holding its chunk
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        packet(w, n);
        w.close();
      });
      assertTrue(written.await(10, TimeUnit.SECONDS));
      TraceWriter w = writer.get();
      int before = timestamps(sink, w).size();
      assertTrue(before < n, "some packets are still in the held chunk: " + before);
      assertTrue(sink.arbiter.startWriterFlush(b -> true).poll());
      sink.drain();
      List<Long> expected = new ArrayList<>();
      for (long i = 0; i < n; i++) {
        expected.add(i);
      }
      assertEquals(expected, timestamps(sink, w));
      release.countDown();
      t.join();
      sink.drain();
      expected.add((long) n);
      assertEquals(expected, timestamps(sink, w), "the thread goes on in a new chunk after the flush");
      assertEquals(0, sink.service.badChunks);
    }
  }

  @Test
  void writersRacingFlushesLoseAndDuplicateNothing() throws Exception {
    race(4, 150, 11);
  }

  @Test
  @Tag("stress")
  @Timeout(value = 300, unit = TimeUnit.SECONDS) // 46-52 s alone on a slow 2-core VM: the class's 60 s was too tight
  void writersRacingFlushesStress() throws Exception {
    for (long seed = 1; seed <= 5; seed++) {
      race(8, 3000, seed);
    }
  }

  /** Checks the packets read since the last call: each writer's timestamps go on from seen[t]. */
  private static void readNew(TestSink sink, AtomicIntegerArray ids, long[] seen) throws Exception {
    for (ServiceSide.Read r : sink.service.readNewOnly()) {
      for (int t = 0; t < ids.length(); t++) {
        if (ids.get(t) == r.writerId()) {
          assertEquals(seen[t]++, TracePacket.parseFrom(r.data()).getTimestamp(), "writer " + t);
        }
      }
    }
  }

  private static void race(int threads, int rounds, long seed) throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 16, PAGE, 256 << 20)) {
      AtomicLongArray finished = new AtomicLongArray(threads);
      AtomicIntegerArray ids = new AtomicIntegerArray(threads);
      AtomicBoolean stop = new AtomicBoolean();
      CountDownLatch started = new CountDownLatch(threads);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int index = t;
        workers.add(Thread.ofPlatform().name("writer-" + t).start(() -> {
          Random random = new Random(seed * 31 + index);
          ChunkPacketEncoder small = new ChunkPacketEncoder();
          try (TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL)) {
            ids.set(index, w.writerId());
            started.countDown();
            for (long i = 0; !stop.get(); i++) {
              // Half the packets take the in-chunk path TrackEvent uses (falling back when it can't).
              if (random.nextBoolean()) {
                int length = ProtoWire.varIntFieldSize(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
                long at = w.beginSmallPacket(length);
                if (at >= 0) {
                  small.begin(w.chunkMemory(), at).rawByte(length).varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i)
                      .finish();
                  w.endSmallPacket();
                  finished.set(index, i + 1);
                  continue;
                }
              }
              ProtoWriter p = w.newTracePacket();
              p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
              if (random.nextInt(16) == 0) {
                p.beginNested(TracePacket.FOR_TESTING_FIELD_NUMBER);
                p.beginNested(TestEvent.PAYLOAD_FIELD_NUMBER);
                p.appendBytes(TestEvent.TestPayload.STR_FIELD_NUMBER, new byte[random.nextInt(9000)]);
              }
              w.finishTracePacket();
              finished.set(index, i + 1);
              int r = random.nextInt(64);
              if (r < 3) {
                LockSupport.parkNanos(random.nextInt(300_000)); // idle between packets
              } else if (r == 3) {
                w.flush();
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      assertTrue(started.await(10, TimeUnit.SECONDS));
      int taken = 0;
      long[] seen = new long[threads];
      for (int round = 0; round < rounds && failure.get() == null; round++) {
        long[] before = new long[threads];
        for (int t = 0; t < threads; t++) {
          before[t] = finished.get(t);
        }
        WriterFlush f = sink.arbiter.startWriterFlush(b -> true);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!f.poll()) {
          assertTrue(System.nanoTime() < deadline, "writers never answered: " + f.remaining());
          Thread.onSpinWait();
        }
        taken++;
        sink.drain(); // waits for a drain another thread may be in the middle of
        readNew(sink, ids, seen);
        for (int t = 0; t < threads; t++) {
          assertTrue(seen[t] >= before[t], "round " + round + " writer " + t + ": " + seen[t]
              + " packets in the service, " + before[t] + " finished before the flush");
        }
        if (round % 8 == 0) {
          LockSupport.parkNanos(200_000);
        }
      }
      stop.set(true);
      for (Thread w : workers) {
        w.join();
      }
      if (failure.get() != null) {
        throw new AssertionError("writer failed", failure.get());
      }
      sink.drain();
      readNew(sink, ids, seen);
      for (int t = 0; t < threads; t++) {
        assertEquals(finished.get(t), seen[t], "writer " + t + ": every packet exactly once");
      }
      assertEquals(rounds, taken);
      assertEquals(0, sink.service.badChunks, "a chunk committed twice is not COMPLETE the second time");
      assertEquals(0, sink.service.patchesFailed);
    }
  }
}
