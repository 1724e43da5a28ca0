package org.jperfetto.ipc.wire;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jperfetto.protos.IPCFrame;

/**
 * The framing of Perfetto's socket protocol: a u32 little-endian length, then that many bytes of a
 * proto-encoded {@link IPCFrame}.
 *
 * <pre>
 *  0        4                     4+len
 *  +--------+---------------------+
 *  | len LE | IPCFrame (len bytes)| next frame ...
 *  +--------+---------------------+
 * </pre>
 */
public final class Frames {
  /** Size of the length prefix. */
  public static final int HEADER_SIZE = 4;

  /**
   * Largest frame a peer may send, length prefix included (upstream's kIPCBufferSize, 128 KiB).
   * A larger frame is a protocol error and the sender is dropped.
   */
  public static final int MAX_FRAME_SIZE = 128 * 1024;

  /** Largest IPCFrame payload that still fits in {@link #MAX_FRAME_SIZE}. */
  public static final int MAX_PAYLOAD_SIZE = MAX_FRAME_SIZE - HEADER_SIZE;

  private Frames() {}

  /** Bytes {@code frame} takes on the wire, prefix included. */
  public static int encodedSize(IPCFrame frame) {
    return HEADER_SIZE + frame.getSerializedSize();
  }

  /**
   * Encodes {@code frame} with its prefix into a new array.
   *
   * @throws IllegalArgumentException if the frame is larger than {@link #MAX_FRAME_SIZE}
   */
  public static byte[] encode(IPCFrame frame) {
    int payload = checkedPayloadSize(frame);
    byte[] out = new byte[HEADER_SIZE + payload];
    writeTo(frame, payload, ByteBuffer.wrap(out));
    return out;
  }

  /**
   * Encodes {@code frame} with its prefix at {@code dst.position()}, advancing the position. No
   * intermediate array: a direct buffer is written in place.
   *
   * @return the bytes written
   * @throws IllegalArgumentException if the frame is larger than {@link #MAX_FRAME_SIZE}
   * @throws java.nio.BufferOverflowException if {@code dst} has too little room
   */
  public static int encodeInto(IPCFrame frame, ByteBuffer dst) {
    int payload = checkedPayloadSize(frame);
    if (dst.remaining() < HEADER_SIZE + payload) {
      throw new java.nio.BufferOverflowException();
    }
    writeTo(frame, payload, dst);
    return HEADER_SIZE + payload;
  }

  /** Throws unless {@code frame} fits in one wire frame; returns its payload size. */
  public static int checkedPayloadSize(IPCFrame frame) {
    int payload = frame.getSerializedSize();
    if (payload > MAX_PAYLOAD_SIZE) {
      throw new IllegalArgumentException("IPC frame too large: size=" + (HEADER_SIZE + payload)
          + " max=" + MAX_FRAME_SIZE + " request_id=" + frame.getRequestId());
    }
    return payload;
  }

  private static void writeTo(IPCFrame frame, int payload, ByteBuffer dst) {
    ByteOrder order = dst.order();
    dst.order(ByteOrder.LITTLE_ENDIAN).putInt(payload).order(order);
    int start = dst.position();
    try {
      CodedOutputStream out = CodedOutputStream.newInstance(dst);
      frame.writeTo(out);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("encoding IPCFrame into a buffer", e);
    }
    // CodedOutputStream over a ByteBuffer advances the buffer itself; make sure it did.
    dst.position(start + payload);
  }
}
