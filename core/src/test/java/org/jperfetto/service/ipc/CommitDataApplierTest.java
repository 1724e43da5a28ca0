package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.service.ProducerEndpoint;
import org.jperfetto.service.buffer.PatchBatch;
import org.jperfetto.testing.Fixtures;
import org.junit.jupiter.api.Test;

/**
 * The in-place CommitData path against protobuf-java's decoding: the same calls, in the same
 * order, for every CommitData real upstream producers sent (test-fixtures/interop) and for random
 * requests; and requests it must leave to the regular path are declined before any call.
 */
class CommitDataApplierTest {
  private final CommitDataApplier decoder = new CommitDataApplier();

  /** The calls the decoder made, as text. */
  private static ProducerEndpoint recorder(List<String> calls) {
    return (ProducerEndpoint) Proxy.newProxyInstance(ProducerEndpoint.class.getClassLoader(),
        new Class<?>[] {ProducerEndpoint.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "commitChunk" -> {
              calls.add("move page=" + args[0] + " chunk=" + args[1] + " buffer=" + args[2]);
              return true;
            }
            case "patchChunk" -> calls.add("patch buffer=" + args[0] + " writer=" + args[1] + " chunk=" + args[2]
                + " " + describe((PatchBatch) args[3]) + " more=" + args[4]);
            case "endCommit" -> calls.add("end flush=" + args[0]);
            default -> throw new AssertionError("unexpected call " + method.getName());
          }
          return null;
        });
  }

  private static String describe(PatchBatch b) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < b.count(); i++) {
      byte[] data = new byte[b.lengthAt(i)];
      MemorySegment.copy(b.sourceAt(i), ValueLayout.JAVA_BYTE, b.sourceOffsetAt(i), data, 0, data.length);
      s.append(b.offsetAt(i)).append(':').append(HexFormat.of().formatHex(data)).append(' ');
    }
    return s.append(']').toString();
  }

  /** What {@link ProducerEndpoint#commitData} does with the decoded request, as the same calls. */
  private static List<String> expected(CommitDataRequest r) {
    List<String> calls = new ArrayList<>();
    for (CommitDataRequest.ChunksToMove m : r.getChunksToMoveList()) {
      calls.add("move page=" + m.getPage() + " chunk=" + m.getChunk() + " buffer=" + m.getTargetBuffer());
    }
    for (CommitDataRequest.ChunkToPatch c : r.getChunksToPatchList()) {
      StringBuilder s = new StringBuilder("[");
      for (CommitDataRequest.ChunkToPatch.Patch p : c.getPatchesList()) {
        s.append(Integer.toUnsignedLong(p.getOffset())).append(':')
            .append(HexFormat.of().formatHex(p.getData().toByteArray())).append(' ');
      }
      calls.add("patch buffer=" + c.getTargetBuffer() + " writer=" + c.getWriterId() + " chunk=" + c.getChunkId()
          + " " + s.append(']') + " more=" + c.getHasMorePatches());
    }
    calls.add("end flush=" + r.getFlushRequestId());
    return calls;
  }

  private List<String> decode(byte[] request, boolean expectTaken) {
    List<String> calls = new ArrayList<>();
    try (Arena arena = Arena.ofConfined()) {
      // Inside a larger native buffer, as in the IPC frame buffer: nothing outside the range is read.
      MemorySegment buf = arena.allocate(request.length + 32, 8);
      buf.fill((byte) 0xff);
      MemorySegment.copy(request, 0, buf, ValueLayout.JAVA_BYTE, 16, request.length);
      boolean taken = decoder.apply(buf, 16, request.length, recorder(calls));
      assertEquals(expectTaken, taken, "taken: " + HexFormat.of().formatHex(request));
    }
    return calls;
  }

  @Test
  void realProducersCommitDataDecodesAsProtobufDoes() throws IOException {
    int seen = 0;
    int withPatches = 0;
    for (String folder : List.of("v58producer_v58traced", "v14producer_v58traced")) {
      Path stream = Fixtures.interop(folder, "producer.ipc.fd4.send.bin");
      ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(stream)).order(ByteOrder.LITTLE_ENDIAN);
      while (in.remaining() >= 4) {
        byte[] frame = new byte[in.getInt()];
        in.get(frame);
        IPCFrame f = IPCFrame.parseFrom(frame);
        // CommitData is method 4 of ProducerPort, the only service these producers bind
        if (!f.hasMsgInvokeMethod() || f.getMsgInvokeMethod().getMethodId() != 4) {
          continue;
        }
        byte[] args = f.getMsgInvokeMethod().getArgsProto().toByteArray();
        CommitDataRequest r = CommitDataRequest.parseFrom(args);
        assertEquals(expected(r), decode(args, true), folder);
        seen++;
        withPatches += r.getChunksToPatchCount() > 0 ? 1 : 0;
      }
    }
    assertTrue(seen >= 4, "CommitData frames in the captures: " + seen);
    assertTrue(withPatches >= 1, "CommitData frames with patches: " + withPatches);
  }

  @Test
  void randomRequestsDecodeAsProtobufDoes() throws IOException {
    Random rnd = new Random(42);
    for (int i = 0; i < 2000; i++) {
      CommitDataRequest.Builder b = CommitDataRequest.newBuilder();
      for (int m = rnd.nextInt(5); m > 0; m--) {
        b.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(rnd.nextInt())
            .setChunk(rnd.nextInt(16)).setTargetBuffer(rnd.nextInt(1 << 20)));
      }
      for (int c = rnd.nextInt(3); c > 0; c--) {
        CommitDataRequest.ChunkToPatch.Builder p = CommitDataRequest.ChunkToPatch.newBuilder()
            .setTargetBuffer(rnd.nextInt(100)).setWriterId(rnd.nextInt(70000)).setChunkId(rnd.nextInt())
            .setHasMorePatches(rnd.nextBoolean());
        for (int n = rnd.nextInt(4); n > 0; n--) {
          byte[] data = new byte[rnd.nextInt(6)];
          rnd.nextBytes(data);
          p.addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder().setOffset(rnd.nextInt())
              .setData(com.google.protobuf.ByteString.copyFrom(data)));
        }
        b.addChunksToPatch(p);
      }
      if (rnd.nextBoolean()) {
        b.setFlushRequestId(rnd.nextLong());
      }
      byte[] args = b.build().toByteArray();
      assertEquals(expected(CommitDataRequest.parseFrom(args)), decode(args, true));
    }
  }

  @Test
  void requestsForTheRegularPathAreDeclinedBeforeAnyCall() {
    byte[] inline = CommitDataRequest.newBuilder().addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder()
        .setPage(1).setData(com.google.protobuf.ByteString.copyFrom(new byte[16]))).build().toByteArray();
    assertTrue(decode(inline, false).isEmpty(), "inline chunk data");
    byte[] unknown = {0x08, 0x01, 0x0a, 0x02, 0x08, 0x01}; // field 1 as a varint, then a move
    assertTrue(decode(unknown, false).isEmpty(), "chunks_to_move with the wrong wire type");
    byte[] extra = {0x0a, 0x02, 0x08, 0x01, 0x20, 0x05}; // a move, then unknown field 4
    assertTrue(decode(extra, false).isEmpty(), "unknown field");
    byte[] truncated = {0x0a, 0x05, 0x08, 0x01};
    assertTrue(decode(truncated, false).isEmpty(), "length past the end");
    byte[] badVarint = {0x18, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
        (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01};
    assertTrue(decode(badVarint, false).isEmpty(), "11-byte varint");
    assertFalse(decode(new byte[0], true).isEmpty(), "an empty request is a plain commit of nothing");
  }
}
