package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.ipc.wire.RawInvoke;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.CommitDataResponse;
import org.junit.jupiter.api.Test;

/** The in-place request path agrees with protobuf-java both ways: reading requests, writing replies. */
class RawPathTest {
  @Test
  void emptyReplyBytesEqualWhatMethodCallSends() {
    for (long id : new long[] {0, 1, 127, 128, 300, 1L << 35, Long.MAX_VALUE, -1L}) {
      IPCFrame expected = IPCFrame.newBuilder().setRequestId(id)
          .setMsgInvokeMethodReply(IPCFrame.InvokeMethodReply.newBuilder().setSuccess(true).setHasMore(false)
              .setReplyProto(CommitDataResponse.getDefaultInstance().toByteString()))
          .build();
      OutboundBuffer out = new OutboundBuffer(1 << 16);
      try {
        assertTrue(out.appendEmptyReply(id));
        byte[] got = out.pendingForTest();
        assertArrayEquals(Frames.encode(expected), got, "request_id " + id);
      } finally {
        out.close();
      }
    }
  }

  @Test
  void invokeFrameBytesEqualWhatProtobufWrites() {
    Random rnd = new Random(11);
    int[] ids = {0, 1, 127, 128, 16383, 16384, Integer.MAX_VALUE, -1};
    for (int i = 0; i < 2000; i++) {
      byte[] args = new byte[i % 7 == 0 ? 200 + rnd.nextInt(20000) : rnd.nextInt(60)];
      rnd.nextBytes(args);
      int offset = rnd.nextInt(3);
      byte[] padded = new byte[args.length + offset + 2];
      System.arraycopy(args, 0, padded, offset, args.length);
      long requestId = i % 3 == 0 ? rnd.nextLong() : rnd.nextInt(1 << 20);
      int serviceId = ids[rnd.nextInt(ids.length)];
      int methodId = ids[rnd.nextInt(ids.length)];
      boolean dropReply = rnd.nextBoolean();
      IPCFrame expected = IPCFrame.newBuilder().setRequestId(requestId)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(serviceId).setMethodId(methodId)
              .setArgsProto(ByteString.copyFrom(args)).setDropReply(dropReply))
          .build();
      OutboundBuffer out = new OutboundBuffer(1 << 17);
      try {
        assertTrue(out.appendInvoke(requestId, serviceId, methodId, padded, offset, args.length, dropReply));
        assertArrayEquals(Frames.encode(expected), out.pendingForTest(), "frame " + i);
      } finally {
        out.close();
      }
    }
  }

  @Test
  void invokeFrameOverTheSizeCapIsRefusedWithNothingQueued() {
    OutboundBuffer out = new OutboundBuffer(1 << 20);
    try {
      byte[] args = new byte[Frames.MAX_PAYLOAD_SIZE];
      IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> out.appendInvoke(1, 1, 4, args, 0, args.length, true));
      assertTrue(e.getMessage().contains("exceeds " + Frames.MAX_FRAME_SIZE), e.getMessage());
      assertTrue(out.isEmpty());
    } finally {
      out.close();
    }
  }

  @Test
  void rawInvokeReadsWhatProtobufWrites() {
    Random rnd = new Random(7);
    RawInvoke raw = new RawInvoke();
    try (Arena arena = Arena.ofConfined()) {
      for (int i = 0; i < 5000; i++) {
        byte[] args = new byte[rnd.nextInt(40)];
        rnd.nextBytes(args);
        IPCFrame.InvokeMethod.Builder invoke = IPCFrame.InvokeMethod.newBuilder();
        if (rnd.nextInt(8) > 0) {
          invoke.setServiceId(rnd.nextInt(5));
        }
        if (rnd.nextInt(8) > 0) {
          invoke.setMethodId(rnd.nextInt(20));
        }
        if (rnd.nextBoolean()) {
          invoke.setArgsProto(ByteString.copyFrom(args));
        }
        if (rnd.nextBoolean()) {
          invoke.setDropReply(rnd.nextBoolean());
        }
        IPCFrame.Builder frame = IPCFrame.newBuilder().setMsgInvokeMethod(invoke);
        if (rnd.nextInt(8) > 0) {
          frame.setRequestId(rnd.nextLong());
        }
        byte[] bytes = frame.build().toByteArray();
        MemorySegment seg = arena.allocate(bytes.length + 8);
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 4, bytes.length);
        assertTrue(raw.read(seg, 4, bytes.length));
        IPCFrame f = frame.build();
        assertEquals(f.getRequestId(), raw.requestId());
        assertEquals(f.getMsgInvokeMethod().getServiceId(), raw.serviceId());
        assertEquals(f.getMsgInvokeMethod().getMethodId(), raw.methodId());
        assertEquals(f.getMsgInvokeMethod().getDropReply(), raw.dropReply());
        byte[] gotArgs = new byte[raw.argsLength()];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, raw.argsOffset(), gotArgs, 0, gotArgs.length);
        assertArrayEquals(f.getMsgInvokeMethod().getArgsProto().toByteArray(), gotArgs);
      }
    }
  }

  @Test
  void otherFramesAreLeftToTheDecoder() {
    try (Arena arena = Arena.ofConfined()) {
      RawInvoke raw = new RawInvoke();
      byte[][] others = {
          IPCFrame.newBuilder().setRequestId(1).setMsgBindService(
              IPCFrame.BindService.newBuilder().setServiceName("ProducerPort")).build().toByteArray(),
          IPCFrame.newBuilder().setRequestId(1).addDataForTesting(ByteString.copyFromUtf8("x"))
              .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setMethodId(1)).build().toByteArray(),
          {0x10, 0x01, 0x2a, 0x05, 0x08, 0x01}, // invoke method whose length runs past the end
          {0x10}, // truncated request id
          {0x10, 0x01}, // no InvokeMethod at all
      };
      for (byte[] bytes : others) {
        MemorySegment seg = arena.allocate(Math.max(1, bytes.length));
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
        assertFalse(raw.read(seg, 0, bytes.length), java.util.HexFormat.of().formatHex(bytes));
      }
    }
  }
}
