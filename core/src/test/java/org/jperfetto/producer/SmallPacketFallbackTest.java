package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageHeader;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.wire.ProtoWire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TraceWriter.beginSmallPacket declines exactly when it must (chunk too full, packet count at the
 * cap, first packet of the sequence, dropping), and beginSmallPacketInNextChunk then takes the next
 * chunk for a packet the current one had no room for, and only for that; a packet encoded into the
 * chunk through them, or written through the regular path after they declined, reads back as the
 * regular path's does, and while neither path changed chunks it leaves the very bytes in the SMB
 * that the regular path alone does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SmallPacketFallbackTest {
  private static final int PAGE = 4096;
  /** A fresh chunk's payload: the page's one chunk after the page and chunk headers. */
  private static final int FRESH_CHUNK_ROOM = PAGE - PageHeader.SIZE - ChunkHeader.SIZE;
  private static final int SMALL_TIMESTAMP = 123_456_789;
  /** A small packet's length at SMALL_TIMESTAMP: timestamp (5 bytes), a fixed64 in field 1000 (10). */
  private static final int LENGTH = 15;

  /**
   * Writes one small packet: through the fast path (trying the next chunk, then falling back, as
   * TrackEvent does) or not.
   */
  private static final class Small {
    final boolean fast;
    final List<Boolean> accepted = new ArrayList<>();
    final List<Long> leftBefore = new ArrayList<>();
    final ChunkPacketEncoder encoder = new ChunkPacketEncoder();
    boolean tiny;

    Small(boolean fast) {
      this.fast = fast;
    }

    void write(TraceWriter w, long timestamp) {
      int length = tiny ? ProtoWire.varIntFieldSize(TracePacket.TIMESTAMP_FIELD_NUMBER, timestamp) : LENGTH;
      if (fast) {
        leftBefore.add(w.bytesLeftInChunk());
        long at = w.beginSmallPacket(length);
        if (at < 0) {
          at = w.beginSmallPacketInNextChunk(length);
        }
        accepted.add(at >= 0);
        if (at >= 0) {
          ChunkPacketEncoder e = encoder.begin(w.chunkMemory(), at).rawByte(length)
              .varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, timestamp);
          if (!tiny) {
            e.fixed64(1000, timestamp);
          }
          assertEquals(length + 1, e.finish());
          w.endSmallPacket();
          return;
        }
      }
      ProtoWriter p = w.newTracePacket();
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, timestamp);
      if (!tiny) {
        p.appendFixed64(1000, timestamp);
      }
      w.finishTracePacket();
    }
  }

  private static Small run(int pages, BufferExhaustedPolicy policy, BiConsumer<TraceWriter, Small> script)
      throws Exception {
    return run(pages, policy, script, fast -> true);
  }

  /**
   * Runs script on two fresh SMBs, fast path and regular path; asserts the same packets come back
   * and, when sameLayout says the regular path cannot have laid them out differently, equal SMB bytes.
   */
  private static Small run(int pages, BufferExhaustedPolicy policy, BiConsumer<TraceWriter, Small> script,
      java.util.function.Predicate<Small> sameLayout) throws Exception {
    Small fast = new Small(true);
    Small regular = new Small(false);
    try (TestSink a = new TestSink(TestSink.Mode.LAZY, pages, PAGE, 1 << 20);
        TestSink b = new TestSink(TestSink.Mode.LAZY, pages, PAGE, 1 << 20)) {
      TraceWriter wa = a.newWriter(policy);
      TraceWriter wb = b.newWriter(policy);
      script.accept(wa, fast);
      script.accept(wb, regular);
      boolean same = sameLayout.test(fast);
      if (same) {
        assertEquals(-1, a.smb.mismatch(b.smb), "SMB bytes differ from the regular path's");
      }
      wa.flush();
      wb.flush();
      if (same) {
        assertEquals(-1, a.smb.mismatch(b.smb), "SMB bytes differ after the flush");
      }
      a.drain();
      b.drain();
      List<ServiceSide.Read> ra = a.service.readAll();
      List<ServiceSide.Read> rb = b.service.readAll();
      assertEquals(rb.size(), ra.size());
      for (int i = 0; i < ra.size(); i++) {
        assertEquals(TracePacket.parseFrom(rb.get(i).data()), TracePacket.parseFrom(ra.get(i).data()));
      }
      assertEquals(0, a.service.badChunks);
    }
    return fast;
  }

  /** A small packet's room in its chunk: size byte, packet, and the last stored long's tail. */
  private static final int NEEDED = LENGTH + 1 + ChunkPacketEncoder.SLACK;

  /**
   * Whether every packet the fast path took fitted the chunk it found: when one did not, the fast
   * path moved to the next chunk where the regular path, with its 4-byte size header, may split the
   * packet over both, or fit it (both valid; the packets read back are compared either way).
   */
  private static boolean noChunkChange(Small fast) {
    for (int k = 0; k < fast.accepted.size(); k++) {
      if (fast.accepted.get(k) && fast.leftBefore.get(k) < NEEDED) {
        return false;
      }
    }
    return true;
  }

  private static void filler(TraceWriter w, int bodyBytes) {
    w.newTracePacket().appendBytes(1000, new byte[bodyBytes]);
    w.finishTracePacket();
  }

  @Test
  void firstPacketOfTheSequenceGoesTheRegularWay() throws Exception {
    Small fast = run(4, BufferExhaustedPolicy.STALL, (w, small) -> {
      small.write(w, SMALL_TIMESTAMP);
      small.write(w, SMALL_TIMESTAMP + 1);
    });
    assertEquals(List.of(false, true), fast.accepted, "declined first (first_packet_on_sequence), then taken");
  }

  @Test
  void tinyPacketsTakeTheFastPathToo() throws Exception {
    Small fast = run(4, BufferExhaustedPolicy.STALL, (w, small) -> {
      small.write(w, SMALL_TIMESTAMP);
      small.tiny = true;
      small.write(w, SMALL_TIMESTAMP); // 6 bytes with its size: less than one stored long
      small.tiny = false;
      small.write(w, SMALL_TIMESTAMP);
    });
    assertEquals(List.of(false, true, true), fast.accepted);
  }

  @Test
  void nearlyFullChunkHandsTheSmallPacketToTheNextChunk() throws Exception {
    boolean sawJustShort = false;
    boolean sawJustEnough = false;
    // Sweep the filler so the room left before the small packet passes every value around the edge.
    for (int body = 3960; body <= 4080; body++) {
      int f = body;
      List<Long> leftAfter = new ArrayList<>();
      Small fast = run(4, BufferExhaustedPolicy.STALL, (w, small) -> {
        small.write(w, SMALL_TIMESTAMP); // the sequence's first packet (declined) out of the way
        filler(w, f);
        small.write(w, SMALL_TIMESTAMP);
        leftAfter.add(w.bytesLeftInChunk());
        small.write(w, SMALL_TIMESTAMP + 2);
      }, SmallPacketFallbackTest::noChunkChange);
      assertEquals(List.of(false, true, true), fast.accepted, "body=" + f);
      long left = fast.leftBefore.get(1);
      // Without room for the packet and the slack, it went to the start of a fresh chunk.
      long expectedAfter = left >= NEEDED ? left - (LENGTH + 1) : FRESH_CHUNK_ROOM - (LENGTH + 1);
      assertEquals(expectedAfter, leftAfter.get(0), "body=" + f + " left=" + left);
      sawJustShort |= left == NEEDED - 1;
      sawJustEnough |= left == NEEDED;
    }
    assertTrue(sawJustShort && sawJustEnough, "the sweep hit one byte short of the room needed, and exactly it");
  }

  @Test
  void aBurstOfSmallPacketsCrossesChunksWithoutTheRegularPath() throws Exception {
    int n = 1500; // 16 bytes each: about six 4 KiB chunks
    Small fast = run(8, BufferExhaustedPolicy.STALL, (w, small) -> {
      for (int i = 0; i < n; i++) {
        small.write(w, SMALL_TIMESTAMP + i);
      }
    }, SmallPacketFallbackTest::noChunkChange);
    assertFalse(fast.accepted.get(0), "the sequence's first packet goes the regular way");
    assertFalse(fast.accepted.subList(1, n).contains(false), "every later one is taken");
    long changes = fast.leftBefore.stream().skip(1).filter(left -> left < NEEDED).count();
    assertTrue(changes >= 4, "chunk changes on the fast path: " + changes);
  }

  @Test
  void packetCountCapDeclinesAndTheNextChunkTakesIt() throws Exception {
    int max = TraceWriter.MAX_PACKETS_PER_CHUNK;
    for (int before = max - 2; before <= max + 1; before++) {
      int n = before;
      Small fast = run(4, BufferExhaustedPolicy.STALL, (w, small) -> {
        for (int i = 0; i < n; i++) {
          w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, i % 100);
          w.finishTracePacket();
        }
        small.write(w, SMALL_TIMESTAMP);
      });
      long left = fast.leftBefore.get(0);
      assertTrue(left >= LENGTH + 1 + ChunkPacketEncoder.SLACK, "room is not the reason: left=" + left);
      assertEquals(n != max, fast.accepted.get(0), "after " + n + " packets (cap " + max + ")");
    }
  }

  @Test
  void droppingDeclinesAndTheLossIsAnnounced() throws Exception {
    // Not compared with the regular path: the fast path leaves a full chunk's last few bytes unused,
    // so the two fill the 2-page SMB at slightly different packets.
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.DROP);
      Small fast = new Small(true);
      int n = 200;
      for (int i = 0; i < n; i++) {
        filler(w, 60);
        fast.write(w, SMALL_TIMESTAMP + i);
      }
      assertTrue(w.dropEvents() > 0, "the 2-page SMB ran out");
      int firstDecline = fast.accepted.subList(1, n).indexOf(false);
      assertTrue(firstDecline >= 0, "declined while dropping");
      assertFalse(fast.accepted.get(n - 1), "still dropping at the end");
      sink.drain(); // the service catches up; the writer drops on until its scratch chunk is full
      int end = n + 40; // about 3 KiB more: room for them once the scratch chunk is full
      for (int i = n; i < end; i++) {
        filler(w, 60);
        w.acknowledgeLoss(); // as TrackEvent does once it wrote a new incremental state
        fast.write(w, SMALL_TIMESTAMP + i);
      }
      assertTrue(fast.accepted.get(fast.accepted.size() - 1), "back on the fast path");
      w.flush();
      sink.drain();
      List<Long> smallOnes = new ArrayList<>();
      boolean announced = false;
      for (ServiceSide.Read r : sink.service.readAll()) {
        TracePacket packet = TracePacket.parseFrom(r.data());
        announced |= !smallOnes.isEmpty() && smallOnes.get(smallOnes.size() - 1) < n - 1
            && (packet.getPreviousPacketDropped() != 0 || r.previousDropped());
        if (packet.hasTimestamp()) {
          smallOnes.add(packet.getTimestamp() - SMALL_TIMESTAMP);
        }
      }
      assertTrue(smallOnes.size() < end && smallOnes.contains(end - 1L), "some lost, the last kept: " + smallOnes);
      assertEquals(smallOnes.stream().sorted().toList(), smallOnes, "in order");
      assertTrue(announced, "the first packet after the loss says so");
      assertEquals(0, sink.service.badChunks);
    }
  }

  @Test
  void afterALossTheFastPathStaysClosedUntilTheLossIsAcknowledged() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, PAGE, 1 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.DROP);
      Small fast = new Small(true);
      assertFalse(w.lossUnacknowledged());
      while (w.dropEvents() == 0) {
        filler(w, 60);
      }
      assertTrue(w.lossUnacknowledged());
      assertFalse(w.acknowledgeLoss(), "not while the writer is still dropping");
      assertTrue(w.lossUnacknowledged());
      sink.drain(); // chunks are free again; the writer finds one when its scratch chunk is used up
      int written = 0;
      boolean landed = false;
      while (!landed) {
        landed = w.nextPacketMayLand();
        filler(w, 60); // the packet a TrackEvent writes then: its new incremental state
        written++;
        assertTrue(written < 100, "the writer never left drop mode");
        fast.write(w, SMALL_TIMESTAMP + written);
        assertFalse(fast.accepted.get(fast.accepted.size() - 1), "declined before the acknowledgement");
      }
      assertTrue(w.lossUnacknowledged(), "writing again does not acknowledge by itself");
      assertTrue(w.acknowledgeLoss());
      assertFalse(w.lossUnacknowledged());
      fast.write(w, SMALL_TIMESTAMP + 1000);
      assertTrue(fast.accepted.get(fast.accepted.size() - 1), "the fast path again");
      w.flush();
      sink.drain();
      List<Long> smallOnes = new ArrayList<>();
      for (ServiceSide.Read r : sink.service.readAll()) {
        TracePacket packet = TracePacket.parseFrom(r.data());
        if (packet.hasTimestamp()) {
          smallOnes.add(packet.getTimestamp() - SMALL_TIMESTAMP);
        }
      }
      assertEquals(1000L, smallOnes.get(smallOnes.size() - 1));
      assertEquals(0, sink.service.badChunks);
    }
  }
}
