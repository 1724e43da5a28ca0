package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import org.jperfetto.os.Membarrier;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.TestEvent;
import org.jperfetto.protos.TracePacket;

/**
 * Random interleavings, on one thread, of packets (small, chunk-spanning, left open), user flushes
 * and flush rounds, with and without the process barrier. A round that completes leaves every
 * finished packet in the service; in the end every packet is there once, in order, and no chunk or
 * patch was refused.
 */
class WriterFlushProperties {
  enum Kind { PACKET, OPEN, FINISH, ROUND, USER_FLUSH }

  record Op(Kind kind, int payload) {}

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Op> op = Combinators.combine(Arbitraries.of(Kind.class),
        Arbitraries.oneOf(Arbitraries.integers().between(0, 200), Arbitraries.integers().between(0, 12_000)))
        .as(Op::new);
    return op.list().ofMaxSize(60);
  }

  @Property(tries = 200)
  void roundsCommitEveryFinishedPacket(@ForAll("ops") List<Op> ops, @ForAll boolean barrier) throws Exception {
    run(ops, barrier && Membarrier.isAvailable());
  }

  @Property(tries = 5000)
  @Tag("stress")
  void roundsCommitEveryFinishedPacketStress(@ForAll("ops") List<Op> ops, @ForAll boolean barrier)
      throws Exception {
    run(ops, barrier && Membarrier.isAvailable());
  }

  private static void run(List<Op> ops, boolean barrier) throws Exception {
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 8, 4096, 16 << 20,
        barrier ? WriterFlush::membarrier : () -> false)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      long begun = 0; // packets started
      boolean open = false;
      WriterFlush round = null;
      long roundStart = 0; // packets finished when the pending round began
      for (Op op : ops) {
        switch (op.kind()) {
          case PACKET, OPEN -> {
            write(w.newTracePacket(), begun++, op.payload());
            open = true;
            if (op.kind() == Kind.PACKET) {
              w.finishTracePacket();
              open = false;
            }
          }
          case FINISH -> {
            w.finishTracePacket();
            open = false;
          }
          case USER_FLUSH -> {
            w.flush();
            open = false;
            assertEquals(begun, sink.packetsPerWriter().getOrDefault(w.writerId(), 0L), "after flush()");
          }
          case ROUND -> {
            if (round == null) {
              round = sink.arbiter.startWriterFlush(b -> true);
              roundStart = open ? begun - 1 : begun;
            }
          }
          default -> throw new IllegalStateException("unknown op kind " + op.kind());
        }
        if (round != null && round.poll()) {
          if (barrier) {
            assertTrue(sink.packetsPerWriter().getOrDefault(w.writerId(), 0L) >= roundStart,
                "a completed round left finished packets behind");
          }
          round = null;
        } else if (round != null) {
          assertTrue(open, "only a writer inside a packet keeps a round waiting");
          assertEquals(1, round.remaining());
        }
      }
      w.close();
      sink.drain();
      List<ServiceSide.Read> reads = sink.service.readAll();
      assertEquals(begun, reads.size());
      for (int i = 0; i < reads.size(); i++) {
        assertEquals(i, TracePacket.parseFrom(reads.get(i).data()).getTimestamp());
      }
      assertEquals(0, sink.service.badChunks);
      assertEquals(0, sink.service.patchesFailed);
      assertFalse(w.handshake.isBusy());
      assertEquals(FlushHandshake.NONE, w.handshake.claim(), "a closed writer answered every request");
    }
  }

  private static void write(ProtoWriter p, long timestamp, int payload) {
    p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, timestamp);
    if (payload > 0) {
      p.beginNested(TracePacket.FOR_TESTING_FIELD_NUMBER);
      p.beginNested(TestEvent.PAYLOAD_FIELD_NUMBER);
      p.appendBytes(TestEvent.TestPayload.STR_FIELD_NUMBER, new byte[payload]);
    }
  }
}
