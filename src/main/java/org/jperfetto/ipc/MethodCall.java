package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.Fds;
import org.jperfetto.protos.IPCFrame;

/**
 * One InvokeMethod as the handler sees it: who called, the request bytes, the fd that came with
 * the request, and the way to answer. Answers may come later and from any thread; the host sends
 * them from its loop in the order given.
 *
 * <p>A call ends with {@link #reply}, {@link #fail} or a {@link #send} without has_more; before
 * that, {@link #replyMore} streams replies with has_more set (GetAsyncCommand, ReadBuffers). If the
 * client asked for no reply (drop_reply), answers are accepted and discarded.
 */
public final class MethodCall {
  /** Where answers go: the connection that made the request. */
  interface ReplyChannel {
    void sendReply(IPCFrame frame, int fd);

    /** Reply bytes accepted but not yet written to the socket (0 once closed). */
    long unsentBytes();

    /** See {@link MethodCall#whenUnsentBelow}. */
    void whenUnsentBelow(long bytes, Runnable task);
  }

  private final ReplyChannel channel;
  private final ClientInfo client;
  private final String serviceName;
  private final String methodName;
  private final int methodId;
  private final long requestId;
  private final ByteString args;
  private final boolean replyExpected;
  private int receivedFd;
  private boolean done;

  MethodCall(ReplyChannel channel, ClientInfo client, String serviceName, String methodName,
      int methodId, long requestId, ByteString args, boolean replyExpected, int receivedFd) {
    this.channel = channel;
    this.client = client;
    this.serviceName = serviceName;
    this.methodName = methodName;
    this.methodId = methodId;
    this.requestId = requestId;
    this.args = args;
    this.replyExpected = replyExpected;
    this.receivedFd = receivedFd;
  }

  public ClientInfo client() {
    return client;
  }

  public String serviceName() {
    return serviceName;
  }

  public String methodName() {
    return methodName;
  }

  public int methodId() {
    return methodId;
  }

  public long requestId() {
    return requestId;
  }

  /** The encoded request message (InvokeMethod.args_proto). */
  public ByteString args() {
    return args;
  }

  /** False when the client set drop_reply: whatever is answered is discarded. */
  public boolean replyExpected() {
    return replyExpected;
  }

  /**
   * The fd received with this request, or -1; the caller owns it from now on. Only the first call
   * gets it. An fd not taken by the time the handler returns is closed.
   */
  public synchronized int takeReceivedFd() {
    int fd = receivedFd;
    receivedFd = -1;
    return fd;
  }

  synchronized void closeUntakenFd() {
    if (receivedFd >= 0) {
      Fds.closeQuietly(receivedFd);
      receivedFd = -1;
    }
  }

  /** The final, successful reply. */
  public void reply(ByteString reply) {
    send(reply, false, -1);
  }

  public void reply(MessageLite reply) {
    send(reply.toByteString(), false, -1);
  }

  /** A successful reply with has_more set: more will follow. */
  public void replyMore(ByteString reply) {
    send(reply, true, -1);
  }

  public void replyMore(MessageLite reply) {
    send(reply.toByteString(), true, -1);
  }

  /**
   * A successful reply, streamed if {@code hasMore}, carrying {@code fd} (or -1). The host owns the
   * fd from now on and closes it once sent (pass a dup to keep yours).
   *
   * @throws IllegalStateException if the call already ended
   * @throws IllegalArgumentException if the reply does not fit in one frame
   */
  public void send(ByteString reply, boolean hasMore, int fd) {
    IPCFrame frame = IPCFrame.newBuilder().setRequestId(requestId)
        .setMsgInvokeMethodReply(IPCFrame.InvokeMethodReply.newBuilder()
            .setSuccess(true).setHasMore(hasMore).setReplyProto(reply))
        .build();
    answer(frame, fd, !hasMore);
  }

  /** The final reply, failed (success=false): the client's call fails. */
  public void fail() {
    answer(failedReply(requestId), -1, true);
  }

  /**
   * Reply bytes of this connection (all its calls) accepted but not yet written to the socket:
   * lets a long stream (ReadBuffers) pace itself below {@link IpcHost#MAX_SEND_BUFFER_BYTES}
   * instead of getting the peer dropped. Any thread.
   */
  public long unsentReplyBytes() {
    return channel.unsentBytes();
  }

  /**
   * Runs {@code task} once on the host's loop thread as soon as this connection's unsent reply
   * bytes are at or below {@code bytes} (at once if they are now): a long stream produces its
   * next replies only as the socket drains. One waiter per connection, a newer one replacing it;
   * never run if the connection closes first (its services hear the disconnect instead). Any
   * thread.
   */
  public void whenUnsentBelow(long bytes, Runnable task) {
    channel.whenUnsentBelow(bytes, task);
  }

  /** True once the final answer was given. */
  public synchronized boolean isDone() {
    return done;
  }

  private void answer(IPCFrame frame, int fd, boolean last) {
    try {
      Frames.checkedPayloadSize(frame);
      synchronized (this) {
        if (done) {
          throw new IllegalStateException("call already answered: " + this);
        }
        done = last;
      }
    } catch (RuntimeException e) {
      if (fd >= 0) {
        Fds.closeQuietly(fd);
      }
      throw e;
    }
    if (replyExpected) {
      channel.sendReply(frame, fd);
    } else if (fd >= 0) {
      Fds.closeQuietly(fd);
    }
  }

  static IPCFrame failedReply(long requestId) {
    return IPCFrame.newBuilder().setRequestId(requestId)
        .setMsgInvokeMethodReply(IPCFrame.InvokeMethodReply.newBuilder().setSuccess(false))
        .build();
  }

  @Override
  public String toString() {
    return serviceName + "." + methodName + " request_id=" + requestId + " client=" + client.clientId();
  }
}
