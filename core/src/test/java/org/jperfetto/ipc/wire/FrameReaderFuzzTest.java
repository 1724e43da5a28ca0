package org.jperfetto.ipc.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jperfetto.protos.IPCFrame;

/**
 * Coverage-guided fuzzing of the IPC frame reader (docs/fuzzing.md). The input is a byte stream as
 * a peer would send it, cut into reads of fuzzer-chosen sizes, some carrying an fd. Checked against
 * a plain reference decoder of the whole stream: the same frames in the same order whatever the
 * cuts, the failure the reference predicts, every fd handed out or closed exactly once, the buffer
 * never past the frame cap; and {@link RawInvoke}, offered every frame, may only accept a frame
 * the full decoder reads as the same InvokeMethod.
 */
class FrameReaderFuzzTest {
  @FuzzTest
  void frames(FuzzedDataProvider data) {
    int cutSeed = data.consumeInt();
    int fdEvery = data.consumeInt(0, 8); // 0: no fds
    byte[] stream = data.consumeRemainingAsBytes();

    Expected expected = reference(stream);
    List<IPCFrame> received = new ArrayList<>();
    Set<Integer> fdsGiven = new HashSet<>();
    Set<Integer> fdsOut = new HashSet<>(); // handed to the sink or closed by the reader
    RawInvoke raw = new RawInvoke();
    FrameSink sink = new FrameSink() {
      @Override
      public void onFrame(IPCFrame frame, int fd) {
        received.add(frame);
        if (fd >= 0) {
          assertTrue(fdsOut.add(fd), "fd handed out twice: " + fd);
        }
      }

      @Override
      public boolean onRawFrame(MemorySegment buffer, long offset, int length) {
        if (raw.read(buffer, offset, length)) {
          checkRawAgreesWithFullDecode(raw, buffer, offset, length);
        }
        return false; // let the reader decode it too, so the frame lists can be compared
      }
    };

    boolean ok = true;
    FrameReader reader = new FrameReader(fd -> assertTrue(fdsOut.add(fd), "fd closed twice: " + fd));
    try {
      int pos = 0;
      int reads = 0;
      int cut = cutSeed;
      while (pos < stream.length && ok) {
        int n = Math.min(stream.length - pos, 1 + Math.floorMod(cut, 1 + (cut >>> 24 & 0xff) * 64));
        cut = cut * 1103515245 + 12345;
        int fd = fdEvery > 0 && reads % fdEvery == 0 ? 1000 + reads : -1;
        if (fd >= 0) {
          fdsGiven.add(fd);
        }
        ok = reader.feed(stream, pos, n, fd, sink);
        pos += n;
        reads++;
        assertTrue(reader.capacity() <= Frames.MAX_FRAME_SIZE, "buffer past the cap");
      }
    } finally {
      reader.close();
    }

    assertEquals(expected.frames, received, "frames differ from the reference decode");
    if (expected.failure == null) {
      assertTrue(ok, () -> "reader failed where the reference did not: " + reader.failure());
    } else {
      assertNotNull(reader.failure(), "reader accepted a stream the reference rejects");
      assertEquals(expected.failure, reader.failure().kind());
    }
    assertEquals(fdsGiven, fdsOut, "fds not handed out or closed exactly once");
  }

  private static void checkRawAgreesWithFullDecode(RawInvoke raw, MemorySegment buffer, long offset, int length) {
    byte[] bytes = buffer.asSlice(offset, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    IPCFrame frame;
    try {
      frame = IPCFrame.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError("RawInvoke accepted a frame the full decoder rejects: " + e.getMessage());
    }
    assertTrue(frame.hasMsgInvokeMethod(), "RawInvoke accepted a frame that is no InvokeMethod");
    IPCFrame.InvokeMethod m = frame.getMsgInvokeMethod();
    assertEquals(frame.getRequestId(), raw.requestId(), "request_id");
    assertEquals(m.getServiceId(), raw.serviceId(), "service_id");
    assertEquals(m.getMethodId(), raw.methodId(), "method_id");
    assertEquals(m.getDropReply(), raw.dropReply(), "drop_reply");
    ByteString args = ByteString.copyFrom(buffer.asSlice(raw.argsOffset(), raw.argsLength())
        .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    assertEquals(m.getArgsProto(), args, "args_proto");
  }

  private record Expected(List<IPCFrame> frames, FrameReader.FailureKind failure) {}

  /** The stream decoded in one piece, simply: u32 LE length, then an IPCFrame. */
  private static Expected reference(byte[] stream) {
    List<IPCFrame> frames = new ArrayList<>();
    ByteBuffer in = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    while (in.remaining() >= Frames.HEADER_SIZE) {
      long length = Integer.toUnsignedLong(in.getInt(in.position()));
      if (Frames.HEADER_SIZE + length > Frames.MAX_FRAME_SIZE) {
        return new Expected(frames, FrameReader.FailureKind.FRAME_TOO_LARGE);
      }
      if (in.remaining() < Frames.HEADER_SIZE + length) {
        break;
      }
      byte[] payload = new byte[(int) length];
      in.position(in.position() + Frames.HEADER_SIZE).get(payload);
      if (length == 0) {
        continue;
      }
      try {
        frames.add(IPCFrame.parseFrom(payload));
      } catch (InvalidProtocolBufferException e) {
        return new Expected(frames, FrameReader.FailureKind.MALFORMED_FRAME);
      }
    }
    return new Expected(frames, null);
  }

  /**
   * Found by this fuzz test: an InvokeMethod whose length reads as 2^31-1 and holds an unknown
   * length-delimited field crashed the JVM (SIGSEGV in protobuf's Unsafe copy) while the reader
   * parsed frames in place from native memory. It is a malformed frame like any other.
   */
  @org.junit.jupiter.api.Test
  void aNestedLengthNearTwoToThe31IsAMalformedFrame() {
    byte[] frame = {
        0x23, 0, 0, 0, // 35 bytes of IPCFrame follow
        // msg_invoke_method, length 2^31-1 as int32
        0x2a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x87, 0x20,
        0x20, 0x20, (byte) 0xaa, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
        0x01, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x20, 0x20, 0x20, (byte) 0xa5, (byte) 0xff, (byte) 0xff,
        (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x87, (byte) 0xfb, (byte) 0xff, (byte) 0x87, (byte) 0x87,
        0x20};
    for (int i = 0; i < 100; i++) { // the crash read past the buffer: it needed unmapped memory there
      try (FrameReader reader = new FrameReader(fd -> { })) {
        assertEquals(false, reader.feed(frame, 0, frame.length, -1, (f, fd) -> { }));
        assertEquals(FrameReader.FailureKind.MALFORMED_FRAME, reader.failure().kind());
      }
    }
  }

  /** The reference itself, on a stream whose answer is known. */
  @org.junit.jupiter.api.Test
  void referenceDecodesEncodedFrames() {
    IPCFrame a = IPCFrame.newBuilder().setRequestId(7).setMsgBindService(
        IPCFrame.BindService.newBuilder().setServiceName("ProducerPort")).build();
    byte[] ea = Frames.encode(a);
    byte[] stream = new byte[ea.length * 2 + 2];
    System.arraycopy(ea, 0, stream, 0, ea.length);
    System.arraycopy(ea, 0, stream, ea.length, ea.length);
    Expected e = reference(stream);
    assertEquals(List.of(a, a), e.frames);
    assertNull(e.failure);
  }
}
