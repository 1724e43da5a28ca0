package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.jperfetto.protos.ReadBuffersResponse;
import org.junit.jupiter.api.Test;

/** Hand-encoded ReadBuffers replies: protobuf-java's bytes, the same slices, within the size cap. */
class ReadReplyEncoderTest {
  @Test
  void repliesAreProtobufsBytesAndKeepEverySliceInOrder() throws Exception {
    Random rnd = new Random(11);
    for (int round = 0; round < 200; round++) {
      List<ReadBuffersResponse.Slice> slices = new ArrayList<>();
      for (int i = rnd.nextInt(300); i > 0; i--) {
        ReadBuffersResponse.Slice.Builder s = ReadBuffersResponse.Slice.newBuilder();
        if (rnd.nextInt(10) > 0) {
          byte[] data = new byte[rnd.nextInt(10) == 0 ? rnd.nextInt(20_000) : rnd.nextInt(200)];
          rnd.nextBytes(data);
          s.setData(ByteString.copyFrom(data));
        }
        if (rnd.nextBoolean()) {
          s.setLastSliceForPacket(rnd.nextBoolean());
        }
        slices.add(s.build());
      }
      int max = 1 + rnd.nextInt(64 * 1024);
      List<ByteString> replies = new ArrayList<>();
      ReadReplyEncoder.encode(slices, max, replies::add);
      List<ReadBuffersResponse.Slice> back = new ArrayList<>();
      for (ByteString r : replies) {
        ReadBuffersResponse parsed = ReadBuffersResponse.parseFrom(r);
        assertEquals(parsed.toByteString(), r, "protobuf-java's own encoding");
        assertTrue(r.size() <= max || parsed.getSlicesCount() == 1, "reply of " + r.size() + " > " + max);
        back.addAll(parsed.getSlicesList());
      }
      assertEquals(slices, back);
      assertTrue(!replies.isEmpty());
    }
  }
}
