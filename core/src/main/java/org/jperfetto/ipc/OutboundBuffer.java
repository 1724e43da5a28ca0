package org.jperfetto.ipc;

import static org.jperfetto.ipc.wire.IpcFrameTags.ARGS_PROTO;
import static org.jperfetto.ipc.wire.IpcFrameTags.DROP_REPLY;
import static org.jperfetto.ipc.wire.IpcFrameTags.INVOKE_METHOD;
import static org.jperfetto.ipc.wire.IpcFrameTags.METHOD_ID;
import static org.jperfetto.ipc.wire.IpcFrameTags.REQUEST_ID;
import static org.jperfetto.ipc.wire.IpcFrameTags.SERVICE_ID;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Bytes queued for one peer's non-blocking socket, bounded. Frames are encoded straight into a
 * native buffer that grows on demand up to the bound. A frame that carries an fd is sent by a
 * sendmsg that starts at its first byte and ends at its last, so the receiver can tell which frame
 * the fd belongs to (see {@link org.jperfetto.ipc.wire.FrameReader}).
 *
 * <p>Not thread-safe; owners lock around it when several threads send.
 */
final class OutboundBuffer implements AutoCloseable {
  private static final int INITIAL_CAPACITY = 16 * 1024;

  /** A queued fd and the frame it goes with, as offsets into the buffer. */
  private static final class FdMark {
    long start;
    long end;
    final int fd;

    FdMark(long start, long end, int fd) {
      this.start = start;
      this.end = end;
      this.fd = fd;
    }
  }

  private final int maxBytes;
  private final ArrayDeque<FdMark> fdMarks = new ArrayDeque<>();
  private Arena arena;
  private MemorySegment buf;
  private ByteBuffer view;
  private long head;
  private long tail;

  OutboundBuffer(int maxBytes) {
    this.maxBytes = maxBytes;
    allocate(Math.min(INITIAL_CAPACITY, maxBytes));
  }

  /**
   * Queues {@code frame}, and {@code fd} (or -1) with it; the buffer owns the fd from now on and
   * closes it once sent or dropped.
   *
   * @return false, queuing nothing (and closing the fd), if the bound would be exceeded
   * @throws IllegalArgumentException if the frame is larger than {@link Frames#MAX_FRAME_SIZE}
   */
  boolean append(IPCFrame frame, int fd) {
    if (arena == null) {
      Fds.closeQuietly(fd);
      return false;
    }
    int size;
    try {
      size = Frames.HEADER_SIZE + Frames.checkedPayloadSize(frame);
    } catch (IllegalArgumentException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
    if (!ensureRoom(size)) {
      Fds.closeQuietly(fd);
      return false;
    }
    view.limit(view.capacity()).position((int) tail);
    Frames.encodeInto(frame, view);
    if (fd >= 0) {
      fdMarks.add(new FdMark(tail, tail + size, fd));
    }
    tail += size;
    return true;
  }

  /**
   * Queues the frame of a successful final InvokeMethodReply with an empty reply message for
   * request {@code requestId}: the bytes protobuf-java writes for it (request_id; success=true,
   * has_more=false, reply_proto empty), built here without a message object.
   *
   * @return false, queuing nothing, if the bound would be exceeded
   */
  boolean appendEmptyReply(long requestId) {
    if (arena == null) {
      return false;
    }
    int payload = ProtoWire.taggedVarIntSize(REQUEST_ID, requestId) + EMPTY_REPLY.length;
    long at = beginFrame(payload, requestId);
    if (at < 0) {
      return false;
    }
    MemorySegment.copy(EMPTY_REPLY, 0, buf, ValueLayout.JAVA_BYTE, at, EMPTY_REPLY.length);
    tail += Frames.HEADER_SIZE + payload;
    return true;
  }

  /**
   * Makes room for a frame of payload bytes and writes its length prefix and request_id (field 2,
   * first in an IPCFrame as protobuf-java orders them); returns where the rest of the payload goes,
   * or -1 if the bound would be exceeded. The caller advances tail once the frame is complete.
   */
  private long beginFrame(int payload, long requestId) {
    if (!ensureRoom(Frames.HEADER_SIZE + payload)) {
      return -1;
    }
    long at = tail;
    buf.set(LE_INT, at, payload);
    at += Frames.HEADER_SIZE;
    return Varints.put(buf, Varints.put(buf, at, REQUEST_ID), requestId);
  }

  /**
   * Queues the frame of an InvokeMethod whose args are already encoded: the bytes protobuf-java
   * writes for IPCFrame{request_id, msg_invoke_method{service_id, method_id, args_proto,
   * drop_reply}} (drop_reply always present, as upstream's client writes it), without a message
   * object, so a client that encodes its own args (CommitData) allocates nothing per request.
   *
   * @return false, queuing nothing, if the bound would be exceeded
   * @throws IllegalArgumentException if the frame is larger than {@link Frames#MAX_FRAME_SIZE}
   */
  boolean appendInvoke(long requestId, int serviceId, int methodId, byte[] args, int offset, int length,
      boolean dropReply) {
    if (arena == null) {
      return false;
    }
    long sid = Integer.toUnsignedLong(serviceId);
    long mid = Integer.toUnsignedLong(methodId);
    int invoke = ProtoWire.taggedVarIntSize(SERVICE_ID, sid) + ProtoWire.taggedVarIntSize(METHOD_ID, mid)
        + ProtoWire.taggedLengthDelimitedSize(ARGS_PROTO, length) + ProtoWire.taggedVarIntSize(DROP_REPLY, 1);
    int payload = ProtoWire.taggedVarIntSize(REQUEST_ID, requestId)
        + ProtoWire.taggedLengthDelimitedSize(INVOKE_METHOD, invoke);
    if (payload > Frames.MAX_PAYLOAD_SIZE) {
      throw new IllegalArgumentException("frame of " + (Frames.HEADER_SIZE + payload) + " bytes exceeds "
          + Frames.MAX_FRAME_SIZE);
    }
    long at = beginFrame(payload, requestId);
    if (at < 0) {
      return false;
    }
    MemorySegment b = buf;
    at = Varints.put(b, Varints.put(b, at, INVOKE_METHOD), invoke);
    at = Varints.put(b, Varints.put(b, at, SERVICE_ID), sid);
    at = Varints.put(b, Varints.put(b, at, METHOD_ID), mid);
    at = Varints.put(b, Varints.put(b, at, ARGS_PROTO), length);
    MemorySegment.copy(args, offset, b, ValueLayout.JAVA_BYTE, at, length);
    at += length;
    Varints.put(b, Varints.put(b, at, DROP_REPLY), dropReply ? 1 : 0);
    tail += Frames.HEADER_SIZE + payload;
    return true;
  }

  /** msg_invoke_method_reply, 6 bytes: success=1, has_more=0, reply_proto="". */
  private static final byte[] EMPTY_REPLY = IPCFrame.newBuilder().setMsgInvokeMethodReply(
      IPCFrame.InvokeMethodReply.newBuilder().setSuccess(true).setHasMore(false).setReplyProto(
          com.google.protobuf.ByteString.EMPTY)).build().toByteArray();
  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  /**
   * Writes as much as the socket takes now.
   *
   * @return true when everything queued has been sent
   * @throws ErrnoException if the peer is gone (EPIPE, ECONNRESET, ...)
   */
  boolean flush(UnixSocket socket) throws ErrnoException {
    while (head < tail) {
      FdMark mark = fdMarks.peek();
      long n;
      if (mark != null && mark.start == head) {
        n = socket.send(buf, head, mark.end - head, mark.fd);
        if (n < 0) {
          return false;
        }
        fdMarks.poll();
        Fds.closeQuietly(mark.fd); // the kernel holds its own reference now
      } else {
        long end = mark != null ? mark.start : tail;
        n = socket.send(buf, head, end - head, -1);
        if (n < 0) {
          return false;
        }
      }
      head += n;
    }
    head = 0;
    tail = 0;
    return true;
  }

  /** The queued bytes (tests). */
  byte[] pendingForTest() {
    return buf.asSlice(head, tail - head).toArray(ValueLayout.JAVA_BYTE);
  }

  boolean isEmpty() {
    return head == tail;
  }

  long pendingBytes() {
    return tail - head;
  }

  private boolean ensureRoom(int size) {
    long capacity = buf.byteSize();
    if (tail + size <= capacity) {
      return true;
    }
    long pending = tail - head;
    if (pending + size > maxBytes) {
      return false;
    }
    if (pending + size <= capacity && head > 0) {
      compact();
      return true;
    }
    long newCapacity = capacity;
    while (newCapacity < pending + size) {
      newCapacity *= 2;
    }
    newCapacity = Math.min(newCapacity, maxBytes);
    Arena oldArena = arena;
    MemorySegment old = buf;
    allocate((int) newCapacity);
    MemorySegment.copy(old, head, buf, 0, pending);
    shiftMarks(head);
    tail = pending;
    head = 0;
    oldArena.close();
    return true;
  }

  private void compact() {
    long pending = tail - head;
    MemorySegment.copy(buf, head, buf, 0, pending);
    shiftMarks(head);
    tail = pending;
    head = 0;
  }

  private void shiftMarks(long by) {
    for (FdMark mark : fdMarks) {
      mark.start -= by;
      mark.end -= by;
    }
  }

  private void allocate(int capacity) {
    arena = Arena.ofShared();
    buf = arena.allocate(capacity, 8);
    view = buf.asByteBuffer();
  }

  /** Drops what is queued, closing the fds not sent. Idempotent. */
  @Override
  public void close() {
    for (FdMark mark; (mark = fdMarks.poll()) != null; ) {
      Fds.closeQuietly(mark.fd);
    }
    head = 0;
    tail = 0;
    if (arena != null) {
      arena.close();
      arena = null;
    }
  }
}
