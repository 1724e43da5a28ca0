package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** TraceWriter into a real SMB, read back through the service's TraceBuffer. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TraceWriterTest {
  private static final int PAGE = 4096;

  @Test
  void smallPacketsComeBackInOrderWithOneByteSizes() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 64, PAGE, 8 << 20)) {
      TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.STALL);
      int n = 20_000;
      for (int i = 0; i < n; i++) {
        ProtoWriter p = writer.newTracePacket();
        p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
      }
      writer.close();
      List<ServiceSide.Read> reads = sink.service.readAll();
      assertEquals(n, reads.size());
      for (int i = 0; i < n; i++) {
        TracePacket packet = TracePacket.parseFrom(reads.get(i).data());
        assertEquals(i, packet.getTimestamp(), "packet " + i);
        assertEquals(i == 0, packet.getFirstPacketOnSequence(), "first_packet_on_sequence of " + i);
        assertEquals(writer.writerId(), reads.get(i).writerId());
      }
      // ~3-4 bytes per packet: more than 1022 fit a chunk, so the per-chunk packet cap was hit.
      assertTrue(sink.service.chunksMoved < n / 1000 + 2, "chunks " + sink.service.chunksMoved);
      assertEquals(1, sink.registered.get());
      assertEquals(1, sink.unregistered.get());
      assertEquals(0, sink.service.badChunks);
    }
  }

  /** Sizes around every boundary: 1-byte sizes, chunk payload, several chunks, 1 MiB. */
  static final int[] SIZES = {0, 1, 2, 50, 115, 116, 117, 120, 126, 127, 128, 200, 1000, 4000, 4070,
      4080, 4084, 4088, 4096, 5000, 8000, 12_345, 65_536, 100_000, 300_000, 1 << 20};

  @Test
  void packetsFromZeroToOneMebibyteAreFragmentedPatchedAndReassembled() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 16, PAGE, 16 << 20)) {
      TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.STALL);
      Random random = new Random(7);
      List<byte[]> payloads = new ArrayList<>();
      for (int size : SIZES) {
        byte[] payload = new byte[size];
        random.nextBytes(payload);
        payloads.add(payload);
        writeNested(writer.newTracePacket(), payload);
        writer.finishTracePacket();
        // and a small packet between: it shares chunks with the tails of big ones
        writer.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, size);
      }
      writer.flush();
      List<ServiceSide.Read> reads = sink.service.readAll();
      assertEquals(2 * SIZES.length, reads.size());
      for (int k = 0; k < SIZES.length; k++) {
        UnknownFieldSet packet = UnknownFieldSet.parseFrom(reads.get(2 * k).data());
        UnknownFieldSet outer = UnknownFieldSet.parseFrom(single(packet, 900));
        assertArrayEquals(payloads.get(k), single(outer, 1).toByteArray(), "payload of size " + SIZES[k]);
        UnknownFieldSet inner = UnknownFieldSet.parseFrom(single(outer, 2));
        assertEquals(SIZES[k], inner.getField(1).getVarintList().get(0));
        assertEquals(SIZES[k], TracePacket.parseFrom(reads.get(2 * k + 1).data()).getTimestamp());
      }
      assertTrue(sink.service.patchesApplied > 0, "some sizes went through chunks_to_patch");
      assertEquals(0, sink.service.patchesFailed);
      assertEquals(0, sink.service.buffer.stats().abiViolations());
    }
  }

  /** packet { 900: { 1: payload, 2: { 1: size } } }: the outer size lands in an early chunk. */
  static void writeNested(ProtoWriter p, byte[] payload) {
    p.beginNested(900);
    p.appendBytes(1, payload);
    p.beginNested(2);
    p.appendVarInt(1, payload.length);
    p.endNested();
    p.endNested();
  }

  static ByteString single(UnknownFieldSet set, int field) {
    List<ByteString> values = set.getField(field).getLengthDelimitedList();
    assertEquals(1, values.size(), "field " + field);
    return values.get(0);
  }

  @Test
  void dropWithTinySmbCountsLossAndTheRestDecodes() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 4, PAGE, 8 << 20)) {
      AtomicInteger yields = new AtomicInteger();
      sink.arbiter.yieldToService = yields::incrementAndGet;
      TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.DROP);
      byte[] filler = new byte[90];
      int n = 1000;
      for (int i = 0; i < n; i++) {
        ProtoWriter p = writer.newTracePacket();
        p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
        p.appendBytes(1000, filler);
      }
      writer.finishTracePacket();
      assertTrue(writer.dropEvents() >= 1, "the 16 KiB SMB ran out");
      assertTrue(writer.droppedPackets() > 0);
      // The writer yields each time it finds no free chunk: on entering drop mode and at each retry
      // (a 1 KiB garbage chunk holds about ten of these packets), never per dropped packet.
      int yieldsWhileFull = yields.get();
      assertTrue(yieldsWhileFull >= writer.dropEvents(), "yields " + yieldsWhileFull);
      assertTrue(yieldsWhileFull <= writer.droppedPackets() / 5 + 1,
          "yields " + yieldsWhileFull + " for " + writer.droppedPackets() + " dropped packets");
      sink.drain(); // the service catches up: chunks are free again
      // Still dropping into the 1 KiB scratch chunk until it fills; then a real chunk again.
      for (int i = n; i < n + 100; i++) {
        ProtoWriter p = writer.newTracePacket();
        p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
        p.appendBytes(1000, filler);
      }
      writer.flush();
      sink.drain();
      assertTrue(yields.get() <= yieldsWhileFull + 1, "once chunks are free again the writer stops yielding");
      List<ServiceSide.Read> reads = sink.service.readAll();
      long lost = n + 100 - reads.size();
      assertTrue(lost >= writer.droppedPackets() - 1 && lost > 0, "lost=" + lost + " dropped="
          + writer.droppedPackets());
      long previous = -1;
      boolean sawLossMark = false;
      for (ServiceSide.Read r : reads) {
        TracePacket packet = TracePacket.parseFrom(r.data());
        assertTrue(packet.getTimestamp() > previous, "in order");
        if (packet.getTimestamp() >= n) {
          // the first packet after the loss says so
          sawLossMark |= packet.getPreviousPacketDropped() != 0;
        }
        if (packet.getTimestamp() != previous + 1 && previous >= 0) {
          assertTrue(packet.getPreviousPacketDropped() != 0 || r.previousDropped(),
              "a gap is announced: before " + packet.getTimestamp());
        }
        previous = packet.getTimestamp();
      }
      assertTrue(sawLossMark, "previous_packet_dropped written after the loss");
      assertEquals(n + 99, previous);
    }
  }

  @Test
  void eightThreadsUnderStallLoseNothing() throws Exception {
    runStall(8, 100_000);
  }

  @Test
  @org.junit.jupiter.api.Tag("stress")
  void eightThreadsTimesAMillionUnderStall() throws Exception {
    runStall(8, 1_000_000);
  }

  private static void runStall(int threads, int perThread) throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.ASYNC, 16, PAGE, (long) threads * perThread * 16 + (8 << 20))) {
      List<Thread> workers = new ArrayList<>();
      int[] writerIds = new int[threads];
      for (int t = 0; t < threads; t++) {
        int index = t;
        workers.add(Thread.ofPlatform().start(() -> {
          try (TraceWriter writer = sink.newWriter(BufferExhaustedPolicy.STALL)) {
            writerIds[index] = writer.writerId();
            for (int i = 0; i < perThread; i++) {
              ProtoWriter p = writer.newTracePacket();
              p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i);
              p.beginNested(TracePacket.FOR_TESTING_FIELD_NUMBER);
              p.appendVarInt(1, index);
              p.endNested();
            }
          }
        }));
      }
      for (Thread w : workers) {
        w.join();
      }
      sink.drain();
      List<ServiceSide.Read> reads = sink.service.readAll();
      assertEquals((long) threads * perThread, reads.size());
      long[] next = new long[ChunkHeaderIds.MAX];
      for (ServiceSide.Read r : reads) {
        TracePacket packet = TracePacket.parseFrom(r.data());
        assertEquals(next[r.writerId()]++, packet.getTimestamp(), "sequence of writer " + r.writerId());
        // The service flags the first packet of every sequence (it cannot know what came before);
        // first_packet_on_sequence is what tells readers it is not a loss.
        assertEquals(packet.getTimestamp() == 0, r.previousDropped(), "writer " + r.writerId()
            + " ts " + packet.getTimestamp());
        assertEquals(packet.getTimestamp() == 0, packet.getFirstPacketOnSequence());
      }
      for (int id : writerIds) {
        assertEquals(perThread, next[id]);
      }
      assertEquals(0, sink.arbiter.activeWriters());
    }
  }

  /** Writer ids are small: index arrays by them. */
  static final class ChunkHeaderIds {
    static final int MAX = org.jperfetto.abi.ChunkHeader.MAX_WRITER_ID + 1;
  }
}
