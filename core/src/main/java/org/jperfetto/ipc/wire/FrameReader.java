package org.jperfetto.ipc.wire;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.ExtensionRegistryLite;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.function.IntConsumer;
import org.jperfetto.protos.IPCFrame;

/**
 * Incremental reader of the IPC byte stream of one peer: accepts the stream split anywhere (one byte
 * at a time or many frames per read) and hands out whole frames.
 *
 * <p>Use: {@link #receiveBuffer()} / {@link #receiveOffset()} / {@link #receiveSpace()} give the
 * native window a socket read fills; {@link #endReceive} accounts the bytes read and decodes every
 * complete frame into the sink. Memory stays bounded: the buffer grows on demand up to
 * {@link Frames#MAX_FRAME_SIZE} and is reused; no byte[] is made per frame (a frame the sink does
 * not serve in place is copied into one reused heap array and parsed there), so the read path
 * allocates only the protobuf message objects.
 *
 * <p>Why not parse the native buffer in place: protobuf-java's decoder for direct buffers reads
 * through Unsafe, and a nested length near 2^31 overflows its limit arithmetic so that it copies
 * from outside the buffer, crashing the JVM with SIGSEGV (found by FrameReaderFuzzTest). Over a
 * heap array the same input is an ordinary parse error.
 *
 * <p>Errors are sticky and never thrown: a frame announced larger than the cap, or one that does
 * not parse, makes {@code endReceive} return false; {@link #failure()} then says why and the owner
 * should drop the peer. Frames of zero length are skipped, as upstream does.
 *
 * <p>File descriptors: a sender attaches an fd to the first byte of a frame and sends that frame in
 * its own sendmsg. Linux returns from recvmsg right after the message that carried fds, so the frame
 * owning an fd is the last frame that starts inside the bytes of the read that delivered it. This
 * reader applies that rule. An fd it cannot hand out (superseded, or the reader closed) is closed
 * through the {@code closeFd} callback given at construction.
 *
 * <p>Not thread-safe: one reader per connection, used by the thread that reads its socket.
 */
public final class FrameReader implements AutoCloseable {
  /** Why a reader stopped. */
  public enum FailureKind { FRAME_TOO_LARGE, MALFORMED_FRAME, CLOSED }

  /** A sticky reader failure: what and which frame. */
  public record Failure(FailureKind kind, String message) {}

  static final int INITIAL_CAPACITY = 4096;

  private final IntConsumer closeFd;
  private Arena arena;
  private MemorySegment buf;
  /** Where a frame is copied to be parsed (grows on demand up to the largest payload). */
  private byte[] parseBuffer = new byte[INITIAL_CAPACITY];
  /** Bytes held in {@link #buf}, from offset 0: the start of a frame not yet complete. */
  private int size;
  /** Stream offset of buf[0]. */
  private long streamBase;

  private int pendingFd = -1;
  /** Stream range [pendingFdFrom, pendingFdTo) of the read that delivered {@link #pendingFd}. */
  private long pendingFdFrom;
  private long pendingFdTo;

  private Failure failure;
  /** True while frames are being handed to a sink, which may close this reader. */
  private boolean decoding;
  private boolean closeRequested;
  private long framesDecoded;
  private long bytesReceived;

  /** A reader that closes unclaimed fds with {@code closeFd}. */
  public FrameReader(IntConsumer closeFd) {
    this.closeFd = Objects.requireNonNull(closeFd, "closeFd");
    allocate(INITIAL_CAPACITY);
  }

  /** The native receive buffer; read into it at {@link #receiveOffset()}. */
  public MemorySegment receiveBuffer() {
    return buf;
  }

  /** Where the next read goes in {@link #receiveBuffer()}. */
  public long receiveOffset() {
    return size;
  }

  /** Room at {@link #receiveOffset()}; always > 0 while the reader has not failed. */
  public long receiveSpace() {
    return buf.byteSize() - size;
  }

  /**
   * Accounts {@code length} bytes just written at {@link #receiveOffset()} and decodes every
   * complete frame into {@code sink}.
   *
   * @param receivedFd the fd delivered by that read, or -1; ownership passes to the reader
   * @return false if the stream is broken (see {@link #failure()}); the peer should be dropped
   */
  public boolean endReceive(int length, int receivedFd, FrameSink sink) {
    if (length < 0 || length > receiveSpace()) {
      throw new IllegalArgumentException(
          "received length out of window: length=" + length + " space=" + receiveSpace());
    }
    long from = streamBase + size;
    size += length;
    bytesReceived += length;
    if (receivedFd >= 0) {
      if (pendingFd >= 0) {
        // Never happens with a well-behaved sender (one fd per frame): keep the newest.
        closeFd.accept(pendingFd);
      }
      pendingFd = receivedFd;
      pendingFdFrom = from;
      pendingFdTo = from + length;
    }
    if (failure != null) {
      releasePendingFd();
      return false;
    }
    return decodeFrames(sink);
  }

  /** Copies {@code len} bytes of {@code src} through the reader, in as many reads as it takes. */
  public boolean feed(byte[] src, int off, int len, int receivedFd, FrameSink sink) {
    Objects.checkFromIndexSize(off, len, src.length);
    int fd = receivedFd;
    do {
      int n = (int) Math.min(len, receiveSpace());
      MemorySegment.copy(src, off, buf, ValueLayout.JAVA_BYTE, size, n);
      if (!endReceive(n, fd, sink)) {
        return false;
      }
      fd = -1;
      off += n;
      len -= n;
    } while (len > 0);
    return true;
  }

  private boolean decodeFrames(FrameSink sink) {
    decoding = true;
    try {
      return decodeFramesUnlessClosed(sink);
    } finally {
      decoding = false;
      if (closeRequested) {
        close();
      }
    }
  }

  private boolean decodeFramesUnlessClosed(FrameSink sink) {
    int pos = 0;
    while (failure == null && size - pos >= Frames.HEADER_SIZE) {
      int next = decodeFrameAt(pos, sink);
      if (next < 0) {
        if (next == STOP_COMPACTED) {
          pos = 0;
        }
        break;
      }
      pos = next;
    }
    if (closeRequested) {
      return false; // a sink closed the reader: the buffer goes with it
    }
    compact(pos);
    if (failure != null) {
      releasePendingFd();
      return false;
    }
    return true;
  }

  /** {@link #decodeFrameAt}: stop here, the frame is not whole yet or the reader failed. */
  private static final int STOP = -1;
  /** {@link #decodeFrameAt}: stop, the buffer was compacted (its unread bytes now start at 0). */
  private static final int STOP_COMPACTED = -2;

  /**
   * Decodes and hands on the frame at pos if it is all there; returns the position after it, or
   * {@link #STOP} / {@link #STOP_COMPACTED}. One call per frame, not per read, on purpose: a burst
   * brings dozens of frames per read, a quieter producer one, and the JIT compiles a method by how
   * often it is called. With the frame's work inside the loop of the per-read method, that method
   * reached C2 only in the first burst (its code then had the whole CommitData path inlined), while
   * jtraced's warm-up traffic, fewer frames per read, had kept it at C1.
   */
  private int decodeFrameAt(int pos, FrameSink sink) {
    long payload = Integer.toUnsignedLong(buf.get(LE_INT, pos));
    long frameSize = Frames.HEADER_SIZE + payload;
    if (frameSize > Frames.MAX_FRAME_SIZE) {
      fail(FailureKind.FRAME_TOO_LARGE, "IPC frame too large: size=" + frameSize + " max="
          + Frames.MAX_FRAME_SIZE + " at stream offset " + (streamBase + pos));
      return STOP;
    }
    if (size - pos < frameSize) {
      if (frameSize > buf.byteSize()) {
        compact(pos);
        grow((int) frameSize);
        return STOP_COMPACTED;
      }
      return STOP;
    }
    long frameStart = streamBase + pos;
    int fd = claimFd(frameStart, frameStart + frameSize);
    if (payload > 0 && fd < 0 && sink.onRawFrame(buf, pos + Frames.HEADER_SIZE, (int) payload)) {
      framesDecoded++;
    } else if (payload > 0) {
      IPCFrame frame = parse(pos + Frames.HEADER_SIZE, (int) payload, frameStart);
      if (frame == null) {
        if (fd >= 0) {
          closeFd.accept(fd);
        }
        return STOP;
      }
      framesDecoded++;
      sink.onFrame(frame, fd);
    } else if (fd >= 0) {
      closeFd.accept(fd);
    }
    return pos + (int) frameSize;
  }

  /** Hands out the pending fd if the frame [start, end) is the one it belongs to. */
  private int claimFd(long start, long end) {
    if (pendingFd < 0) {
      return -1;
    }
    boolean lastStartInRead = start >= pendingFdFrom && start < pendingFdTo && end >= pendingFdTo;
    boolean noFrameStartedInRead = start >= pendingFdTo;
    if (!lastStartInRead && !noFrameStartedInRead) {
      return -1;
    }
    int fd = pendingFd;
    pendingFd = -1;
    return fd;
  }

  private IPCFrame parse(int offset, int length, long frameStart) {
    if (parseBuffer.length < length) {
      parseBuffer = new byte[Math.min(Frames.MAX_PAYLOAD_SIZE, Math.max(length, 2 * parseBuffer.length))];
    }
    MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, offset, parseBuffer, 0, length);
    try {
      CodedInputStream in = CodedInputStream.newInstance(parseBuffer, 0, length);
      IPCFrame frame = IPCFrame.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
      // A stray END_GROUP tag ends the message early; protobuf-java 3.x's stream parser accepts
      // that silently (4.x and byte[] parsing refuse it). The frame must end where its length says.
      in.checkLastTagWas(0);
      return frame;
    } catch (Exception e) { // InvalidProtocolBufferException, or anything a hostile input provokes
      fail(FailureKind.MALFORMED_FRAME, "malformed IPC frame: size=" + (Frames.HEADER_SIZE + length)
          + " at stream offset " + frameStart + ": " + e.getMessage());
      return null;
    }
  }

  private void compact(int consumed) {
    if (consumed == 0) {
      return;
    }
    int left = size - consumed;
    if (left > 0) {
      MemorySegment.copy(buf, consumed, buf, 0, left);
    }
    size = left;
    streamBase += consumed;
  }

  private void grow(int needed) {
    int capacity = (int) buf.byteSize();
    while (capacity < needed) {
      capacity *= 2;
    }
    capacity = Math.min(capacity, Frames.MAX_FRAME_SIZE);
    Arena old = arena;
    MemorySegment oldBuf = buf;
    allocate(capacity);
    MemorySegment.copy(oldBuf, 0, buf, 0, size);
    old.close();
  }

  private void allocate(int capacity) {
    arena = Arena.ofShared();
    buf = arena.allocate(capacity, 8);
  }

  private void fail(FailureKind kind, String message) {
    if (failure == null) {
      failure = new Failure(kind, message);
    }
  }

  private void releasePendingFd() {
    if (pendingFd >= 0) {
      closeFd.accept(pendingFd);
      pendingFd = -1;
    }
  }

  /** Why the reader stopped, or null while the stream is good. */
  public Failure failure() {
    return failure;
  }

  /** Frames handed to sinks so far. */
  public long framesDecoded() {
    return framesDecoded;
  }

  /** Bytes accounted so far. */
  public long bytesReceived() {
    return bytesReceived;
  }

  /** Bytes of an incomplete frame held now. */
  public int bufferedBytes() {
    return size;
  }

  /** Current receive buffer size (grows on demand, never above the frame cap). */
  public int capacity() {
    return (int) buf.byteSize();
  }

  /** Forgets all state and any failure, as for a new peer (the buffer is kept). For fuzzing. */
  void reset() {
    releasePendingFd();
    size = 0;
    streamBase = 0;
    failure = null;
  }

  /**
   * Closes any fd not handed out and frees the buffer. Idempotent. May be called from a sink: the
   * frames not yet handed out are then dropped and the buffer is freed when the sink returns.
   */
  @Override
  public void close() {
    if (decoding) {
      closeRequested = true; // a sink is closing us mid-read: finish the current frame first
      fail(FailureKind.CLOSED, "reader closed");
      return;
    }
    closeRequested = false;
    releasePendingFd();
    if (arena != null) {
      arena.close();
      arena = null;
      buf = MemorySegment.NULL;
      size = 0;
      fail(FailureKind.CLOSED, "reader closed");
    }
  }

  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
