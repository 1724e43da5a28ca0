package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.jperfetto.protos.CommitDataRequest;

/**
 * The hand encoder of CommitData writes exactly what protobuf-java writes for the same batch, so the
 * service (ours or upstream's) cannot tell the two paths apart; and one encoder reused across
 * batches of any size carries nothing over from the one before.
 */
class CommitDataEncoderProperties {
  record Move(int page, int chunk, int target) {}

  record Patch(int writer, int chunk, int target, int offset, int data, boolean more) {}

  record Batch(List<Move> moves, List<Patch> patches, long flushId) {
    CommitBatch toCommitBatch() {
      CommitBatch b = new CommitBatch();
      for (Move m : moves) {
        b.addMove(m.page, m.chunk, m.target, 4096);
      }
      for (Patch p : patches) {
        b.addPatch(p.writer, p.chunk, p.target, p.offset, p.data);
        b.patchHasMore[b.patches - 1] = p.more;
      }
      b.flushRequestId = flushId;
      return b;
    }
  }

  @Property(tries = 400)
  void bytesEqualProtobufJava(@ForAll("batches") List<Batch> batches) {
    CommitDataEncoder encoder = new CommitDataEncoder();
    for (Batch batch : batches) {
      CommitBatch b = batch.toCommitBatch();
      byte[] expected = CommitRequests.toProto(b).toByteArray();
      int length = encoder.encode(b);
      assertEquals(expected.length, length);
      assertArrayEquals(expected, Arrays.copyOf(encoder.buffer(), length));
    }
  }

  @Property(tries = 100)
  void decodesToTheBatch(@ForAll("batch") Batch batch) throws Exception {
    CommitDataEncoder encoder = new CommitDataEncoder();
    CommitBatch b = batch.toCommitBatch();
    int length = encoder.encode(b);
    CommitDataRequest req = CommitDataRequest.parseFrom(Arrays.copyOf(encoder.buffer(), length));
    assertEquals(b.moves, req.getChunksToMoveCount());
    for (int i = 0; i < b.moves; i++) {
      assertEquals(Integer.toUnsignedLong(b.movePage[i]), Integer.toUnsignedLong(req.getChunksToMove(i).getPage()));
      assertEquals(b.moveChunk[i], req.getChunksToMove(i).getChunk());
      assertEquals(b.moveTargetBuffer[i], req.getChunksToMove(i).getTargetBuffer());
    }
    assertEquals(b.patches, req.getChunksToPatchList().stream()
        .mapToInt(CommitDataRequest.ChunkToPatch::getPatchesCount).sum());
    assertEquals(b.flushRequestId, req.getFlushRequestId());
  }

  @Provide
  Arbitrary<List<Batch>> batches() {
    return batch().list().ofMinSize(1).ofMaxSize(6);
  }

  @Provide
  Arbitrary<Batch> batch() {
    Arbitrary<Integer> small = Arbitraries.integers().between(0, 300);
    Arbitrary<Integer> any = Arbitraries.oneOf(small, Arbitraries.integers());
    Arbitrary<Move> move = Combinators.combine(any, small, small).as(Move::new);
    // Few writers and chunks, so consecutive patches often share a ChunkToPatch group.
    Arbitrary<Patch> patch = Combinators.combine(Arbitraries.integers().between(1, 3),
        Arbitraries.integers().between(0, 2), small, any, Arbitraries.integers(), Arbitraries.of(true, false))
        .as(Patch::new);
    Arbitrary<Long> flush = Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs());
    return Combinators.combine(move.list().ofMaxSize(70), patch.list().ofMaxSize(40), flush).as(Batch::new);
  }
}
