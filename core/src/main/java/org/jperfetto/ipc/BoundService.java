package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A service bound on an {@link IpcClient}: its id and method table as the host announced them in
 * BindServiceReply. Methods are invoked by name; the id comes from that table, never from a
 * constant, and a name the host did not announce fails the call with
 * {@link IpcException.Kind#METHOD_NOT_FOUND} (how a newer client detects an older service).
 *
 * <p>Fds passed to invoke methods become the client's: they are closed once sent or on failure.
 * Futures complete on the client's I/O thread; use the async variants to move work off it.
 */
public final class BoundService {
  private final IpcClient client;
  private final String name;
  private final int serviceId;
  private final Map<String, Integer> methodIds;

  BoundService(IpcClient client, String name, int serviceId, Map<String, Integer> methodIds) {
    this.client = client;
    this.name = name;
    this.serviceId = serviceId;
    this.methodIds = Map.copyOf(methodIds);
  }

  public String name() {
    return name;
  }

  public int serviceId() {
    return serviceId;
  }

  /** Method name to id, as announced by the host. */
  public Map<String, Integer> methodIds() {
    return methodIds;
  }

  public boolean hasMethod(String method) {
    return methodIds.containsKey(method);
  }

  public CompletableFuture<Reply> invoke(String method, MessageLite args) {
    return invoke(method, args.toByteString(), -1);
  }

  public CompletableFuture<Reply> invoke(String method, ByteString args) {
    return invoke(method, args, -1);
  }

  /**
   * Calls {@code method}; the future completes with the final reply (any has_more replies before it
   * are discarded, use {@link #invokeStreaming} for streams), or fails with an {@link IpcException}.
   *
   * @param fd sent with the request, or -1
   */
  public CompletableFuture<Reply> invoke(String method, ByteString args, int fd) {
    return client.invoke(this, method, args, fd, null);
  }

  /**
   * Calls a streaming method: {@code listener} gets every reply (has_more set on all but the last);
   * the future completes after the last one, or fails with an {@link IpcException}.
   */
  public CompletableFuture<Void> invokeStreaming(String method, ByteString args, int fd,
      ReplyListener listener) {
    return client.invoke(this, method, args, fd, listener).thenApply(last -> null);
  }

  /**
   * Calls {@code method} with drop_reply set: the host sends no answer.
   *
   * @throws IpcException if the method does not exist, the connection is gone or the send buffer is
   *     full
   */
  public void invokeNoReply(String method, ByteString args, int fd) throws IpcException {
    client.invokeNoReply(this, method, args, fd);
  }

  /**
   * As {@link #invokeNoReply(String, ByteString, int)} with the request already encoded in
   * {@code args[offset..offset+length)} (no fd): nothing is allocated per call.
   */
  public void invokeNoReply(String method, byte[] args, int offset, int length) throws IpcException {
    client.invokeNoReply(this, method, args, offset, length);
  }

  int methodId(String method) {
    Integer id = methodIds.get(method);
    return id == null ? 0 : id;
  }

  @Override
  public String toString() {
    return name + "(service_id=" + serviceId + ", " + methodIds.size() + " methods)";
  }
}
