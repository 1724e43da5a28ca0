package org.jperfetto.ipc;

/** Receives each reply of a streamed call, on the client's I/O thread; it must not block. */
@FunctionalInterface
public interface ReplyListener {
  /** One reply; the listener owns {@code reply.fd()} if it is not -1. */
  void onReply(Reply reply);
}
