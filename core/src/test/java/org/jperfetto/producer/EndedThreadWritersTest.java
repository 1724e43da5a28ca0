package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Writers of threads that ended: closed by the arbiter, their chunks and ids back, their losses shown. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EndedThreadWritersTest {
  /** Runs body on a new thread that ends before this returns; the writer it made. */
  private static TraceWriter onEndedThread(TestSink sink, BufferExhaustedPolicy policy,
      java.util.function.Consumer<TraceWriter> body) throws InterruptedException {
    AtomicReference<TraceWriter> made = new AtomicReference<>();
    Thread t = Thread.ofPlatform().start(() -> {
      TraceWriter w = TraceWriter.create(sink.arbiter, 1, policy, Thread.currentThread());
      body.accept(w);
      made.set(w);
    });
    t.join();
    return made.get();
  }

  private static void packet(TraceWriter w, long value) {
    w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, value);
    w.finishTracePacket();
  }

  /**
   * In a 2-chunk SMB: other takes one chunk, then a thread fills the other and goes on dropping
   * until it ends; its writer.
   */
  private static TraceWriter endedWhileDropping(TestSink sink, TraceWriter other) throws InterruptedException {
    sink.arbiter.dropGraceNanos(0);
    packet(other, 1);
    TraceWriter ended = onEndedThread(sink, BufferExhaustedPolicy.DROP, w -> {
      for (int i = 0; i < 2_000; i++) {
        packet(w, i);
      }
    });
    assertTrue(ended.droppedPackets() > 0);
    return ended;
  }

  @Test
  void aNewWriterClosesTheWritersOfEndedThreadsAndTheirIdsGoOnWithTheirChunkIds() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 8, 4096, 1 << 20)) {
      int threads = 100; // far more than the SMB's 8 chunks: each thread keeps its chunk until closed
      for (int i = 0; i < threads; i++) {
        long value = i;
        onEndedThread(sink, BufferExhaustedPolicy.DROP, w -> packet(w, value));
      }
      // The last thread's writer is still registered; a flush closes it as well.
      assertEquals(threads - 1, sink.arbiter.endedWritersClosed());
      sink.arbiter.startWriterFlush(b -> true).poll();
      assertEquals(threads, sink.arbiter.endedWritersClosed());
      assertEquals(0, sink.arbiter.activeWriters(), "no writer of an ended thread is kept");
      assertEquals(threads, sink.unregistered.get());
      List<ServiceSide.Read> read = sink.service.readAll();
      assertEquals(threads, read.size(), "every thread's packet reached the service");
      assertEquals(threads, sink.packetsPerWriter().size(), "ids handed out round-robin: a sequence per thread");
    }
  }

  @Test
  void aFreedWriterIdsNextWriterGoesOnWithItsChunkIds() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 8, 4096, 1 << 20)) {
      TraceWriter first = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      for (int i = 0; i < 3; i++) {
        packet(first, i);
        first.flush(); // a chunk each
      }
      int id = first.writerId();
      first.close();
      assertEquals(3, sink.arbiter.firstChunkId(id));
      TraceWriter second = new TraceWriter(sink.arbiter, id, 1, BufferExhaustedPolicy.DROP);
      packet(second, 9);
      second.close();
      assertEquals(4, sink.arbiter.firstChunkId(id), "the second writer's chunk was chunk 3");
      assertEquals(4L, sink.packetsPerWriter().get(id), "the service kept the reused id's chunks");
    }
  }

  @Test
  void aWriterThatWasDroppingWhenItsThreadEndedReportsTheLossWhenClosed() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      TraceWriter other = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      TraceWriter ended = endedWhileDropping(sink, other);
      sink.drain(); // the service frees the filled chunk: the loss marker can land
      assertEquals(1, sink.arbiter.closeEndedWriters());
      sink.drain();
      List<ServiceSide.Read> read = sink.service.readAll();
      ServiceSide.Read last = read.get(read.size() - 1);
      assertEquals(ended.writerId(), last.writerId());
      assertTrue(TracePacket.parseFrom(last.data()).getPreviousPacketDropped() != 0,
          "the ended writer's last packet says packets were lost");
      assertEquals(0, sink.arbiter.packetsLostByEndedWriters());
      other.close();
    }
  }

  @Test
  void aLossNoChunkCanReportIsCounted() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      TraceWriter other = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      long lost = endedWhileDropping(sink, other).droppedPackets();
      assertEquals(1, sink.arbiter.closeEndedWriters()); // nothing drained: no chunk for the marker
      assertEquals(lost, sink.arbiter.packetsLostByEndedWriters());
      other.close();
    }
  }
}
