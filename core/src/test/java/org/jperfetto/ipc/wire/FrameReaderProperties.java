package org.jperfetto.ipc.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.jperfetto.protos.IPCFrame;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class FrameReaderProperties {

  @Provide
  Arbitrary<IPCFrame> frames() {
    Arbitrary<Long> ids = Arbitraries.longs().between(0, Long.MAX_VALUE);
    Arbitrary<byte[]> payloads = Arbitraries.oneOf(
        Arbitraries.bytes().array(byte[].class).ofMaxSize(64),
        Arbitraries.bytes().array(byte[].class).ofMinSize(4000).ofMaxSize(20000));
    Arbitrary<IPCFrame> invoke = Combinators.combine(ids, Arbitraries.integers().between(0, 20),
        payloads, Arbitraries.of(true, false)).as((id, method, args, drop) -> IPCFrame.newBuilder()
            .setRequestId(id).setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(1)
                .setMethodId(method).setArgsProto(ByteString.copyFrom(args)).setDropReply(drop))
            .build());
    Arbitrary<IPCFrame> reply = Combinators.combine(ids, payloads, Arbitraries.of(true, false))
        .as((id, bytes, more) -> IPCFrame.newBuilder().setRequestId(id)
            .setMsgInvokeMethodReply(IPCFrame.InvokeMethodReply.newBuilder().setSuccess(true)
                .setHasMore(more).setReplyProto(ByteString.copyFrom(bytes))).build());
    Arbitrary<IPCFrame> bind = Combinators.combine(ids, Arbitraries.strings().ofMaxLength(30))
        .as((id, name) -> IPCFrame.newBuilder().setRequestId(id)
            .setMsgBindService(IPCFrame.BindService.newBuilder().setServiceName(name)).build());
    Arbitrary<IPCFrame> big = ids.map(id -> IPCFrame.newBuilder().setRequestId(id)
        .addDataForTesting(ByteString.copyFrom(new byte[120_000])).build());
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(5, invoke), net.jqwik.api.Tuple.of(5, reply),
        net.jqwik.api.Tuple.of(3, bind), net.jqwik.api.Tuple.of(1, big));
  }

  /** Any sequence of frames, cut into reads at any points, decodes to the same frames. */
  @Property(tries = 300)
  void anySplitDecodesToTheSameFrames(@ForAll("frameLists") List<IPCFrame> sent, @ForAll long splitSeed) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    sent.forEach(f -> out.writeBytes(Frames.encode(f)));
    byte[] stream = out.toByteArray();
    List<IPCFrame> received = new ArrayList<>();
    try (FrameReader reader = new FrameReader(fd -> {})) {
      SplittableRandom random = new SplittableRandom(splitSeed);
      int pos = 0;
      while (pos < stream.length) {
        int maxRead = switch (random.nextInt(4)) {
          case 0 -> 1;
          case 1 -> 7;
          case 2 -> 5000;
          default -> stream.length;
        };
        int n = Math.min(stream.length - pos, 1 + random.nextInt(maxRead));
        assertTrue(reader.feed(stream, pos, n, -1, (f, fd) -> received.add(f)));
        pos += n;
        assertTrue(reader.capacity() <= Frames.MAX_FRAME_SIZE);
      }
      assertEquals(0, reader.bufferedBytes());
    }
    assertEquals(sent, received);
  }

  @Provide
  Arbitrary<List<IPCFrame>> frameLists() {
    return frames().list().ofMaxSize(25);
  }

  /** Random bytes split randomly never throw and never grow the buffer past the cap. */
  @Property(tries = 2000, seed = "20260101")
  void randomBytesNeverThrow(@ForAll @Size(max = 300) byte[] bytes, @ForAll @IntRange(min = 1, max = 50) int chunk) {
    List<Integer> closed = new ArrayList<>();
    try (FrameReader reader = new FrameReader(closed::add)) {
      for (int pos = 0; pos < bytes.length; pos += chunk) {
        int n = Math.min(chunk, bytes.length - pos);
        if (!reader.feed(bytes, pos, n, pos == 0 ? 1000 : -1, (f, fd) -> { })) {
          break;
        }
        assertTrue(reader.capacity() <= Frames.MAX_FRAME_SIZE);
      }
    }
  }

  /**
   * Over a million seeded random inputs: plausible headers (small lengths) with random payloads,
   * fed one reader after another. None may throw, hand out more fds than it got, or grow past the
   * cap.
   */
  @Test
  @Timeout(120)
  void millionRandomInputsNeverThrow() {
    fuzz(1_000_000, 0x5eedL);
  }

  @Test
  @Tag("stress")
  @Timeout(1200)
  void tenMillionRandomInputsNeverThrow() {
    fuzz(10_000_000, 0xfeedL);
  }

  private static void fuzz(int inputs, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] fdsOut = new int[2]; // [0] handed to the sink, [1] closed by the reader
    long frames = 0;
    long failures = 0;
    try (FrameReader reader = new FrameReader(fd -> fdsOut[1]++)) {
      byte[] input = new byte[512];
      for (int i = 0; i < inputs; i++) {
        int len = random.nextInt(input.length);
        for (int j = 0; j < len; j++) {
          input[j] = (byte) random.nextInt(256);
        }
        if (len >= 4 && random.nextInt(4) != 0) { // mostly a believable length prefix
          int payload = random.nextInt(len);
          input[0] = (byte) payload;
          input[1] = (byte) (payload >>> 8);
          input[2] = 0;
          input[3] = 0;
        }
        boolean ok = reader.feed(input, 0, len, random.nextInt(8) == 0 ? i : -1, (f, fd) -> {
          if (fd >= 0) {
            fdsOut[0]++;
          }
        });
        if (!ok) {
          failures++;
          reader.reset();
        } else if (random.nextInt(16) == 0) {
          reader.reset(); // start over now and then so short streams dominate
        }
        if (reader.capacity() > Frames.MAX_FRAME_SIZE) {
          throw new AssertionError("reader grew past the cap: " + reader.capacity());
        }
        frames = reader.framesDecoded();
      }
    }
    assertTrue(failures > inputs / 100, "the fuzz should hit error paths: " + failures);
    assertTrue(frames > 0, "the fuzz should also decode frames");
    assertTrue(fdsOut[0] + fdsOut[1] > 0);
    assertTrue(Arrays.stream(fdsOut).allMatch(n -> n >= 0));
  }
}
