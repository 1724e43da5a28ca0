package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A writer that loses packets before its first chunk: trace_processor counts previous_packet_dropped
 * on every packet of a sequence but the first it sees (the service marks that one whatever came
 * before), so the loss must show on a later packet of the sequence. Decoded from what the service
 * reads back.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LossBeforeFirstChunkTest {
  private static void packet(TraceWriter w, long value) {
    w.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, value);
    w.finishTracePacket();
  }

  /** The packets the service read for writer id, decoded. */
  private static List<TracePacket> packetsOf(TestSink sink, int id) throws Exception {
    List<TracePacket> out = new java.util.ArrayList<>();
    for (ServiceSide.Read r : sink.service.readAll()) {
      if (r.writerId() == id) {
        out.add(TracePacket.parseFrom(r.data()));
      }
    }
    return out;
  }

  @Test
  void aLossBeforeTheFirstChunkIsMarkedOnASecondPacketOfTheSequence() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      sink.arbiter.dropGraceNanos(0);
      TraceWriter a = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      TraceWriter b = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      packet(a, 1);
      packet(b, 2); // both chunks taken
      TraceWriter late = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      for (int i = 0; i < 5; i++) {
        packet(late, 100 + i); // no chunk yet: lost
      }
      assertEquals(5, late.droppedPackets());
      a.flush();
      sink.drain(); // the service frees a's chunk
      late.flush(); // done with the scratch chunk: the next packet asks for a chunk again
      packet(late, 200);
      late.flush();
      sink.drain();
      List<TracePacket> got = packetsOf(sink, late.writerId());
      assertEquals(2, got.size(), "a lead packet, then the packet that landed: " + got);
      assertFalse(got.get(0).hasTimestamp(), "the lead carries no data");
      assertTrue(got.get(0).getPreviousPacketDropped() != 0);
      assertEquals(200, got.get(1).getTimestamp());
      assertTrue(got.get(1).getPreviousPacketDropped() != 0,
          "the loss is marked on the sequence's second packet, which trace_processor counts");
      b.close();
      a.close();
    }
  }

  @Test
  void aWriterThatNeverLostGetsNoLead() throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.LAZY, 2, 4096, 1 << 20)) {
      TraceWriter w = TraceWriter.create(sink.arbiter, 1, BufferExhaustedPolicy.DROP);
      packet(w, 7);
      w.flush();
      sink.drain();
      List<TracePacket> got = packetsOf(sink, w.writerId());
      assertEquals(1, got.size());
      assertEquals(7, got.get(0).getTimestamp());
      assertTrue(got.get(0).getFirstPacketOnSequence());
      assertEquals(0, got.get(0).getPreviousPacketDropped());
      w.close();
    }
  }
}
