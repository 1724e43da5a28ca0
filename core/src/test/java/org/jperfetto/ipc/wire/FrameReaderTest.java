package org.jperfetto.ipc.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.IPCFrame;
import org.junit.jupiter.api.Test;

class FrameReaderTest {
  private final List<Integer> closedFds = new ArrayList<>();
  private final List<IPCFrame> frames = new ArrayList<>();
  private final List<Integer> fds = new ArrayList<>();
  private final FrameReader reader = new FrameReader(closedFds::add);

  private boolean feed(byte[] bytes, int fd) {
    return reader.feed(bytes, 0, bytes.length, fd, (f, d) -> {
      frames.add(f);
      fds.add(d);
    });
  }

  static IPCFrame bind(long requestId, String name) {
    return IPCFrame.newBuilder().setRequestId(requestId)
        .setMsgBindService(IPCFrame.BindService.newBuilder().setServiceName(name)).build();
  }

  static IPCFrame padded(long requestId, int frameSize) {
    // request_id (1 + varint) + data_for_testing (1 + len varint + n): pick n so the total fits.
    IPCFrame probe = IPCFrame.newBuilder().setRequestId(requestId).build();
    int n = frameSize - Frames.HEADER_SIZE - probe.getSerializedSize() - 1;
    n -= com.google.protobuf.CodedOutputStream.computeUInt32SizeNoTag(n);
    IPCFrame frame = IPCFrame.newBuilder().setRequestId(requestId)
        .addDataForTesting(ByteString.copyFrom(new byte[n])).build();
    if (Frames.encodedSize(frame) != frameSize) { // the varint of n shrank by one: pad by one more
      frame = IPCFrame.newBuilder().setRequestId(requestId)
          .addDataForTesting(ByteString.copyFrom(new byte[n + 1])).build();
    }
    assertEquals(frameSize, Frames.encodedSize(frame));
    return frame;
  }

  static byte[] concat(IPCFrame... all) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (IPCFrame f : all) {
      out.writeBytes(Frames.encode(f));
    }
    return out.toByteArray();
  }

  @Test
  void lengthPrefixIsLittleEndian() {
    byte[] bytes = Frames.encode(bind(1, "ProducerPort"));
    assertEquals(bytes.length - 4, (bytes[0] & 0xff) | (bytes[1] & 0xff) << 8);
    assertEquals(0, bytes[2]);
    assertEquals(0, bytes[3]);
  }

  @Test
  void decodesManyFramesFromOneRead() {
    assertTrue(feed(concat(bind(1, "a"), bind(2, "b"), bind(3, "c")), -1));
    assertEquals(List.of(bind(1, "a"), bind(2, "b"), bind(3, "c")), frames);
    assertEquals(0, reader.bufferedBytes());
  }

  @Test
  void decodesOneByteAtATime() {
    byte[] bytes = concat(bind(1, "ProducerPort"), padded(2, 9000), bind(3, "x"));
    for (byte b : bytes) {
      assertTrue(feed(new byte[] {b}, -1));
    }
    assertEquals(3, frames.size());
    assertEquals(padded(2, 9000), frames.get(1));
    assertEquals(3, reader.framesDecoded());
    assertEquals(bytes.length, reader.bytesReceived());
  }

  /** Whole frames, then the head of one larger than the buffer: the reader compacts, grows, goes on. */
  @Test
  void aFrameLargerThanTheBufferAfterWholeFramesInTheSameRead() {
    IPCFrame big = padded(3, 3 * FrameReader.INITIAL_CAPACITY);
    byte[] bytes = concat(bind(1, "a"), bind(2, "b"), big, bind(4, "c"));
    int split = bytes.length - Frames.encodedSize(big) / 2;
    assertTrue(reader.feed(bytes, 0, split, -1, (f, d) -> frames.add(f)));
    assertEquals(List.of(bind(1, "a"), bind(2, "b")), frames);
    assertTrue(reader.capacity() >= Frames.encodedSize(big), "grown to hold the frame: " + reader.capacity());
    assertTrue(reader.feed(bytes, split, bytes.length - split, -1, (f, d) -> frames.add(f)));
    assertEquals(List.of(bind(1, "a"), bind(2, "b"), big, bind(4, "c")), frames);
    assertEquals(0, reader.bufferedBytes());
  }

  @Test
  void frameOfExactlyTheCapIsAccepted() {
    IPCFrame big = padded(7, Frames.MAX_FRAME_SIZE);
    assertTrue(feed(concat(big, bind(8, "after")), -1));
    assertEquals(List.of(big, bind(8, "after")), frames);
    assertEquals(Frames.MAX_FRAME_SIZE, reader.capacity());
  }

  @Test
  void frameOneByteOverTheCapFailsAsSoonAsItsHeaderArrives() {
    byte[] header = {(byte) 0xfd, (byte) 0xff, 0x01, 0x00}; // payload 131069 -> 131073 with prefix
    assertTrue(feed(concat(bind(1, "before")), -1));
    assertFalse(feed(header, -1));
    assertEquals(List.of(bind(1, "before")), frames);
    FrameReader.Failure failure = reader.failure();
    assertEquals(FrameReader.FailureKind.FRAME_TOO_LARGE, failure.kind());
    assertTrue(failure.message().contains("size=131073"), failure.message());
    assertTrue(failure.message().contains("stream offset " + Frames.encode(bind(1, "before")).length),
        failure.message());
    // Sticky: later good frames are not decoded.
    assertFalse(feed(concat(bind(2, "later")), -1));
    assertEquals(1, frames.size());
    assertTrue(reader.capacity() <= Frames.MAX_FRAME_SIZE);
  }

  @Test
  void hugeLengthDoesNotAllocate() {
    assertFalse(feed(new byte[] {-1, -1, -1, -1}, -1));
    assertEquals(FrameReader.INITIAL_CAPACITY, reader.capacity());
  }

  @Test
  void malformedFrameFailsAfterDeliveringTheFramesBeforeIt() {
    byte[] bad = {3, 0, 0, 0, 0x12, 0x05, 0x01}; // field 2 length-delimited, 5 bytes announced, 1 there
    byte[] good = concat(bind(1, "ok"));
    byte[] both = new byte[good.length + bad.length];
    System.arraycopy(good, 0, both, 0, good.length);
    System.arraycopy(bad, 0, both, good.length, bad.length);
    assertFalse(feed(both, 9));
    assertEquals(List.of(bind(1, "ok")), frames);
    assertEquals(FrameReader.FailureKind.MALFORMED_FRAME, reader.failure().kind());
    assertEquals(List.of(9), closedFds); // the fd belonged to the bad frame: closed, not leaked
  }

  @Test
  void zeroLengthFramesAreSkipped() {
    byte[] good = concat(bind(1, "ok"));
    byte[] bytes = new byte[4 + good.length];
    System.arraycopy(good, 0, bytes, 4, good.length);
    assertTrue(feed(bytes, -1));
    assertEquals(List.of(bind(1, "ok")), frames);
  }

  @Test
  void fdGoesToTheLastFrameStartingInTheReadThatCarriedIt() {
    byte[] three = concat(bind(1, "a"), bind(2, "b"), bind(3, "c"));
    assertTrue(feed(three, 42));
    assertEquals(List.of(-1, -1, 42), fds);
  }

  @Test
  void fdArrivingWithTheFirstPartOfAFrameIsHandedOutWhenTheFrameCompletes() {
    byte[] first = concat(bind(1, "a"));
    byte[] big = Frames.encode(padded(2, 20000));
    byte[] firstRead = new byte[first.length + 10];
    System.arraycopy(first, 0, firstRead, 0, first.length);
    System.arraycopy(big, 0, firstRead, first.length, 10);
    assertTrue(feed(firstRead, 5));
    assertEquals(List.of(-1), fds);
    byte[] rest = new byte[big.length - 10];
    System.arraycopy(big, 10, rest, 0, rest.length);
    assertTrue(feed(rest, -1));
    assertEquals(List.of(-1, 5), fds);
    assertEquals(List.of(), closedFds);
  }

  @Test
  void fdInTheTailOfAFrameGoesToTheNextFrame() {
    byte[] a = Frames.encode(bind(1, "a"));
    assertTrue(feed(java.util.Arrays.copyOf(a, 3), -1));
    byte[] rest = java.util.Arrays.copyOfRange(a, 3, a.length);
    assertTrue(feed(rest, 6)); // no frame starts in this read
    assertTrue(feed(Frames.encode(bind(2, "b")), -1));
    assertEquals(List.of(-1, 6), fds);
  }

  @Test
  void supersededAndUnclaimedFdsAreClosed() {
    byte[] a = Frames.encode(bind(1, "a"));
    assertTrue(feed(java.util.Arrays.copyOf(a, 2), 3));
    assertTrue(feed(java.util.Arrays.copyOfRange(a, 2, 3), 4));
    assertEquals(List.of(3), closedFds);
    reader.close();
    assertEquals(List.of(3, 4), closedFds);
    reader.close();
    assertEquals(FrameReader.FailureKind.CLOSED, reader.failure().kind());
  }

  @Test
  void receiveWindowIsValidated() {
    assertThrows(IllegalArgumentException.class, () -> reader.endReceive(-1, -1, (f, d) -> {}));
    assertThrows(IllegalArgumentException.class,
        () -> reader.endReceive((int) reader.receiveSpace() + 1, -1, (f, d) -> {}));
    assertNull(reader.failure());
  }

  @Test
  void encodeRejectsOversizedFramesAndRoundTrips() {
    IPCFrame tooBig = padded(1, Frames.MAX_FRAME_SIZE);
    IPCFrame oneMore = tooBig.toBuilder().setRequestId(1L << 40).build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Frames.encode(oneMore));
    assertTrue(e.getMessage().contains("max=131072"), e.getMessage());
    java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(100);
    int n = Frames.encodeInto(bind(5, "x"), direct);
    byte[] out = new byte[n];
    direct.flip().get(out);
    assertArrayEquals(Frames.encode(bind(5, "x")), out);
  }

  @Test
  void aSinkMayCloseTheReaderMidRead() {
    byte[] three = concat(bind(1, "a"), bind(2, "b"), bind(3, "c"));
    assertFalse(reader.feed(three, 0, three.length, 11, (f, d) -> {
      frames.add(f);
      reader.close();
    }));
    assertEquals(List.of(bind(1, "a")), frames); // the rest is dropped with the reader
    assertEquals(List.of(11), closedFds);
    assertEquals(FrameReader.FailureKind.CLOSED, reader.failure().kind());
    assertEquals(0, reader.receiveSpace());
  }
}
