package org.jperfetto.ipc.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.jperfetto.protos.CommitDataRequest.ChunkToPatch;
import org.jperfetto.protos.CommitDataRequest;

/**
 * CommitData's two hand-written halves against each other and against protobuf-java, over random
 * lists of chunks to move and patches: the encoder writes exactly what protobuf-java writes for the
 * same request (so the service, ours or upstream's, cannot tell the two paths apart), protobuf-java
 * parses it back to that request, and the decoder reads it back to the same moves, patches and
 * flush id, in the order the service applies them. One encoder reused across batches of any size
 * carries nothing over from the one before.
 */
class CommitDataCodecProperties {
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

    /**
     * The request protobuf-java builds for the batch: consecutive patches of one (writer, chunk)
     * form one ChunkToPatch, whose target buffer is its first patch's and whose has_more_patches is
     * its last patch's; flush_request_id only when non-zero.
     */
    CommitDataRequest toProto() {
      CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
      for (Move m : moves) {
        req.addChunksToMoveBuilder().setPage(m.page).setChunk(m.chunk).setTargetBuffer(m.target);
      }
      ChunkToPatch.Builder group = null;
      Patch previous = null;
      for (Patch p : patches) {
        if (previous == null || p.writer != previous.writer || p.chunk != previous.chunk) {
          group = req.addChunksToPatchBuilder().setTargetBuffer(p.target).setWriterId(p.writer).setChunkId(p.chunk);
        }
        byte[] data = {(byte) p.data, (byte) (p.data >>> 8), (byte) (p.data >>> 16), (byte) (p.data >>> 24)};
        group.addPatchesBuilder().setOffset(p.offset).setData(ByteString.copyFrom(data));
        if (p.more) {
          group.setHasMorePatches(true);
        } else {
          group.clearHasMorePatches();
        }
        previous = p;
      }
      if (flushId != 0) {
        req.setFlushRequestId(flushId);
      }
      return req.build();
    }
  }

  /** A decoder's sink that writes down what it was handed, as text. */
  static final class Recorder implements CommitDataDecoder.Sink {
    final List<String> calls = new ArrayList<>();
    private final StringBuilder patches = new StringBuilder();

    @Override
    public boolean moveChunk(int page, int chunk, int targetBuffer) {
      calls.add("move page=" + page + " chunk=" + chunk + " buffer=" + targetBuffer);
      return true;
    }

    @Override
    public void patch(long offset, MemorySegment data, long dataOffset, int dataLength) {
      byte[] bytes = new byte[dataLength];
      MemorySegment.copy(data, ValueLayout.JAVA_BYTE, dataOffset, bytes, 0, dataLength);
      patches.append(offset).append(':').append(HexFormat.of().formatHex(bytes)).append(' ');
    }

    @Override
    public void endChunkPatches(int targetBuffer, int writerId, int chunkId, boolean hasMorePatches) {
      calls.add("patch buffer=" + targetBuffer + " writer=" + writerId + " chunk=" + chunkId + " [" + patches
          + "] more=" + hasMorePatches);
      patches.setLength(0);
    }

    @Override
    public void endCommit(long flushRequestId) {
      calls.add("end flush=" + flushRequestId);
    }
  }

  /** The calls a decoder should make for request, from protobuf-java's reading of it. */
  static List<String> expectedCalls(CommitDataRequest r) {
    List<String> calls = new ArrayList<>();
    for (CommitDataRequest.ChunksToMove m : r.getChunksToMoveList()) {
      calls.add("move page=" + m.getPage() + " chunk=" + m.getChunk() + " buffer=" + m.getTargetBuffer());
    }
    for (ChunkToPatch c : r.getChunksToPatchList()) {
      StringBuilder s = new StringBuilder();
      for (ChunkToPatch.Patch p : c.getPatchesList()) {
        s.append(Integer.toUnsignedLong(p.getOffset())).append(':')
            .append(HexFormat.of().formatHex(p.getData().toByteArray())).append(' ');
      }
      calls.add("patch buffer=" + c.getTargetBuffer() + " writer=" + c.getWriterId() + " chunk=" + c.getChunkId()
          + " [" + s + "] more=" + c.getHasMorePatches());
    }
    calls.add("end flush=" + r.getFlushRequestId());
    return calls;
  }

  @Property(tries = 400)
  void bytesEqualProtobufJava(@ForAll("batches") List<Batch> batches) {
    CommitDataEncoder encoder = new CommitDataEncoder();
    for (Batch batch : batches) {
      byte[] expected = batch.toProto().toByteArray();
      int length = encoder.encode(batch.toCommitBatch());
      assertEquals(expected.length, length);
      assertArrayEquals(expected, Arrays.copyOf(encoder.buffer(), length));
    }
  }

  @Property(tries = 300)
  void roundTripsThroughTheDecoderAndProtobufJava(@ForAll("batches") List<Batch> batches) throws Exception {
    CommitDataEncoder encoder = new CommitDataEncoder();
    CommitDataDecoder decoder = new CommitDataDecoder();
    for (Batch batch : batches) {
      int length = encoder.encode(batch.toCommitBatch());
      byte[] bytes = Arrays.copyOf(encoder.buffer(), length);
      CommitDataRequest parsed = CommitDataRequest.parseFrom(bytes);
      assertEquals(batch.toProto(), parsed, "protobuf-java reads back the request");

      // The decoder reads it where it lies, at an offset inside a larger segment.
      MemorySegment frame = MemorySegment.ofArray(new byte[length + 24]);
      MemorySegment.copy(bytes, 0, frame, ValueLayout.JAVA_BYTE, 16, length);
      Recorder recorder = new Recorder();
      assertTrue(decoder.apply(frame, 16, length, recorder), "a plain CommitData is decoded in place");
      assertEquals(expectedCalls(parsed), recorder.calls);
    }
  }

  @Provide
  Arbitrary<List<Batch>> batches() {
    return batch().list().ofMinSize(1).ofMaxSize(6);
  }

  @Provide
  Arbitrary<Batch> batch() {
    Arbitrary<Integer> small = Arbitraries.integers().between(0, 300);
    Arbitrary<Integer> any = Arbitraries.oneOf(small, Arbitraries.integers());
    Arbitrary<Move> move = Combinators.combine(any, small, any).as(Move::new);
    // Few writers and chunks, so consecutive patches often share a ChunkToPatch group.
    Arbitrary<Patch> patch = Combinators.combine(Arbitraries.integers().between(1, 3),
        Arbitraries.integers().between(0, 2), any, any, Arbitraries.integers(), Arbitraries.of(true, false))
        .as(Patch::new);
    Arbitrary<Long> flush = Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs());
    return Combinators.combine(move.list().ofMaxSize(70), patch.list().ofMaxSize(40), flush).as(Batch::new);
  }
}
