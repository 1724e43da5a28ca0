package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import java.util.ArrayDeque;
import java.util.Iterator;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.service.TaskRunner;

/**
 * The replies of one consumer connection that can be large or many (ReadBuffers batches, the
 * service state, observed events), handed to the socket only as it drains: nothing is passed on
 * while the connection has {@link #HIGH_WATER_BYTES} unsent, and a stalled queue goes on once the
 * socket took its backlog down to {@link #LOW_WATER_BYTES}. Each queued stream encodes its next
 * reply only when that reply is sent, so what a consumer has not taken stays where it was (in the
 * trace buffer, in the service's registry) instead of in a copy waiting for the socket. A consumer
 * that takes nothing is dropped by the host's send timeout, as for any reply.
 *
 * <p>Service thread only.
 */
final class PacedReplies {
  /**
   * Nothing more is passed to the socket while the connection has this much unsent: a stuck
   * reader costs at most this plus one reply (one ReadBuffers batch), well under the host's bound
   * on a peer's queue ({@link org.jperfetto.ipc.IpcHost#MAX_SEND_BUFFER_BYTES}).
   */
  static final long HIGH_WATER_BYTES = 1024 * 1024;
  /** A stalled queue goes on once the connection's unsent bytes are down to this. */
  static final long LOW_WATER_BYTES = 256 * 1024;
  /**
   * Streams that may wait for the socket at once; a request that would queue one more is
   * refused (its call fails, see {@link #full}), so a consumer that floods QueryServiceState without reading holds
   * a bounded number of snapshots.
   */
  static final int MAX_QUEUED_STREAMS = 16;

  /** A reply stream of one call: its replies encoded one by one, the last one ending the call if ends. */
  private record Stream(MethodCall call, Iterator<ByteString> replies, boolean ends) {}

  private final TaskRunner runner;
  /** Run once the queue is empty and the socket below the low-water mark after a stall. */
  private final Runnable onIdle;
  private final ArrayDeque<Stream> queue = new ArrayDeque<>();
  /** A call of this connection: the handle on its socket's backlog (any call shares it). */
  private MethodCall channel;
  private boolean drainAwaited;
  /** Someone asked {@link #idle} and heard no: {@link #onIdle} runs once it is. */
  private boolean idleWanted;
  private boolean closed;

  PacedReplies(TaskRunner runner, Runnable onIdle) {
    this.runner = runner;
    this.onIdle = onIdle;
  }

  /**
   * Queues the replies of call (sent in order after those queued before); if ends, the last one
   * ends the call, otherwise the call stays open for more. A request that would queue a stream of
   * its own checks {@link #full} first.
   */
  void offer(MethodCall call, Iterator<ByteString> replies, boolean ends) {
    if (closed) {
      return;
    }
    channel = call;
    queue.add(new Stream(call, replies, ends));
    pump();
  }

  /** {@link #MAX_QUEUED_STREAMS} wait already: a request that would add one is refused. */
  boolean full() {
    return queue.size() >= MAX_QUEUED_STREAMS;
  }

  /**
   * True when nothing waits and the socket is below the high-water mark: the caller may produce
   * more now. Otherwise false, and {@code onIdle} runs once that changes.
   */
  boolean idle(MethodCall call) {
    if (closed) {
      return false;
    }
    channel = call;
    if (queue.isEmpty() && call.unsentReplyBytes() < HIGH_WATER_BYTES) {
      return true;
    }
    idleWanted = true;
    awaitDrain();
    return false;
  }

  /** Drops what is queued for call (its stream ended some other way). */
  void cancel(MethodCall call) {
    queue.removeIf(s -> s.call() == call);
  }

  /** The connection is gone: nothing more is sent or produced. */
  void close() {
    closed = true;
    queue.clear();
    idleWanted = false;
  }

  private void pump() {
    while (!queue.isEmpty()) {
      Stream s = queue.peek();
      if (s.call().isDone()) {
        queue.poll(); // ended meanwhile (failed, replaced, the client gone)
        continue;
      }
      if (!s.replies().hasNext()) {
        queue.poll();
        if (s.ends()) {
          s.call().reply(ByteString.EMPTY);
        }
        continue;
      }
      if (s.call().unsentReplyBytes() >= HIGH_WATER_BYTES) {
        awaitDrain();
        return;
      }
      ByteString reply = s.replies().next();
      boolean last = s.ends() && !s.replies().hasNext();
      if (!s.replies().hasNext()) {
        queue.poll();
      }
      s.call().send(reply, !last, -1);
    }
    if (idleWanted && channel != null && channel.unsentReplyBytes() < HIGH_WATER_BYTES) {
      idleWanted = false;
      onIdle.run();
    } else if (idleWanted) {
      awaitDrain();
    }
  }

  private void awaitDrain() {
    if (!drainAwaited && channel != null) {
      drainAwaited = true;
      channel.whenUnsentBelow(LOW_WATER_BYTES, () -> runner.runOrPost(this::onDrained));
    }
  }

  private void onDrained() {
    drainAwaited = false;
    if (!closed) {
      pump();
    }
  }
}
