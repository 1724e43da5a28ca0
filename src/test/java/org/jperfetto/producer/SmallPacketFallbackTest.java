package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.ProtoWire;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TraceWriter.beginSmallPacket declines exactly when it must (chunk nearly full, packet count at the
 * cap, first packet of the sequence, dropping), and a packet encoded into the chunk through it, or
 * written through the regular path after it declined, leaves the very bytes in the SMB that the
 * regular path alone does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SmallPacketFallbackTest {
  private static final int PAGE = 4096;
  private static final int SMALL_TIMESTAMP = 123_456_789;
  /** A small packet's length at SMALL_TIMESTAMP: timestamp (5 bytes), a fixed64 in field 1000 (10). */
  private static final int LENGTH = 15;

  /** Writes one small packet: through the fast path (falling back as TrackEvent does) or not. */
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

  /**
   * Whether every packet the fast path took had room for the regular path's 4-byte size header too:
   * with less, the regular path splits the packet over two chunks where the fast path does not (both
   * valid; the packets read back are compared either way).
   */
  private static boolean regularPathStaysInChunk(Small fast) {
    for (int k = 0; k < fast.accepted.size(); k++) {
      if (fast.accepted.get(k) && fast.leftBefore.get(k) < LENGTH + 6) {
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
  void nearlyFullChunkDeclinesWithoutRoomForTheEncodersSlack() throws Exception {
    int needed = LENGTH + 1 + ChunkPacketEncoder.SLACK; // size byte, packet, the last long's tail
    boolean sawJustShort = false;
    boolean sawJustEnough = false;
    // Sweep the filler so the room left before the small packet passes every value around the edge.
    for (int body = 3960; body <= 4080; body++) {
      int f = body;
      Small fast = run(4, BufferExhaustedPolicy.STALL, (w, small) -> {
        small.write(w, SMALL_TIMESTAMP); // the sequence's first packet (declined) out of the way
        filler(w, f);
        small.write(w, SMALL_TIMESTAMP);
        small.write(w, SMALL_TIMESTAMP + 2);
      }, SmallPacketFallbackTest::regularPathStaysInChunk);
      for (int k = 1; k < fast.accepted.size(); k++) {
        long left = fast.leftBefore.get(k);
        assertEquals(left >= needed, fast.accepted.get(k), "body=" + f + " left=" + left + " packet " + k);
        sawJustShort |= left == needed - 1;
        sawJustEnough |= left == needed;
      }
    }
    assertTrue(sawJustShort && sawJustEnough, "the sweep hit one byte short of the room needed, and exactly it");
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
  void droppingDeclinesAndTheLossIsAnnouncedAlike() throws Exception {
    Small fast = run(2, BufferExhaustedPolicy.DROP, (w, small) -> {
      for (int i = 0; i < 200; i++) {
        filler(w, 60);
        small.write(w, SMALL_TIMESTAMP + i);
      }
      assertTrue(w.dropEvents() > 0, "the 2-page SMB ran out");
    });
    int firstDecline = fast.accepted.subList(1, fast.accepted.size()).indexOf(false);
    assertTrue(firstDecline >= 0, "declined while dropping");
    assertFalse(fast.accepted.get(fast.accepted.size() - 1), "still dropping at the end");
  }
}
