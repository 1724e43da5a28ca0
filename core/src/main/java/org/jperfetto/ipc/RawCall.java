package org.jperfetto.ipc;

import java.lang.foreign.MemorySegment;

/**
 * One InvokeMethod offered to a {@link RawMethodHandler}: the caller, the request id and the
 * request's encoded args in the connection's receive buffer. One instance per connection, reused
 * for every request: valid only during {@link RawMethodHandler#handle}.
 */
public final class RawCall {
  /** Sends the connection's answers. */
  interface Replies {
    void replyEmpty(long requestId);

    void replyFailed(long requestId);
  }

  private final ClientInfo client;
  private final Replies replies;
  private MemorySegment args = MemorySegment.NULL;
  private long argsOffset;
  private int argsLength;
  private long requestId;
  private boolean replyExpected;
  private boolean answered;

  RawCall(ClientInfo client, Replies replies) {
    this.client = client;
    this.replies = replies;
  }

  void reset(long id, MemorySegment buffer, long offset, int length, boolean expectReply) {
    requestId = id;
    args = buffer;
    argsOffset = offset;
    argsLength = length;
    replyExpected = expectReply;
    answered = false;
  }

  boolean answered() {
    return answered;
  }

  public ClientInfo client() {
    return client;
  }

  public long requestId() {
    return requestId;
  }

  /** The buffer holding the encoded request (InvokeMethod.args_proto); read it, do not keep it. */
  public MemorySegment args() {
    return args;
  }

  public long argsOffset() {
    return argsOffset;
  }

  public int argsLength() {
    return argsLength;
  }

  /**
   * The final, successful reply with an empty reply message (a response without fields, such as
   * CommitDataResponse), byte for byte what {@link MethodCall#reply} sends for it.
   */
  public void replyEmpty() {
    answer();
    if (replyExpected) {
      replies.replyEmpty(requestId);
    }
  }

  /** The final reply, failed. */
  public void fail() {
    answer();
    if (replyExpected) {
      replies.replyFailed(requestId);
    }
  }

  private void answer() {
    if (answered) {
      throw new IllegalStateException("call already answered: request_id=" + requestId);
    }
    answered = true;
  }
}
