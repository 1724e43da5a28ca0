package org.jperfetto.ipc;

import com.google.protobuf.ByteString;

/**
 * One successful InvokeMethodReply.
 *
 * @param bytes the encoded reply message (reply_proto)
 * @param hasMore true if more replies to the same call follow (streams)
 * @param fd the fd that came with this reply, or -1; whoever receives the Reply owns it and must
 *     close it
 */
public record Reply(ByteString bytes, boolean hasMore, int fd) {}
