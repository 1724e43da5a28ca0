package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.ipc.wire.FrameSink;
import org.jperfetto.os.Epoll;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.TcpSockets;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;

/**
 * The client side of Perfetto's IPC over one AF_UNIX connection: bind services by name, invoke
 * their methods by name, receive replies, streams and fds.
 *
 * <p>Threading: requests are written from the calling thread (any thread; a lock orders them), so a
 * call costs no thread hop; replies are read by the client's own I/O thread, which completes the
 * futures and runs stream listeners. When the connection ends (peer gone, protocol error,
 * {@link #close()}), every pending call fails with {@link IpcException.Kind#CONNECTION_LOST} and the
 * {@link ConnectionListener} is told once.
 */
public final class IpcClient implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(IpcClient.class.getName());

  /** Unsent request bytes allowed before calls fail with SEND_FAILED. */
  public static final int MAX_SEND_BUFFER_BYTES = 4 * 1024 * 1024;

  private static final int READ_EVENTS = Epoll.IN | Epoll.RDHUP;
  private static final int READS_PER_EVENT = 16;

  private sealed interface Pending permits PendingBind, PendingCall {}

  private record PendingBind(String serviceName, CompletableFuture<BoundService> future)
      implements Pending {}

  private record PendingCall(String what, CompletableFuture<Reply> future, ReplyListener listener)
      implements Pending {}

  private final UnixSocket socket;
  private final String address;
  private final ConnectionListener listener;
  private final EventLoop loop;
  private final FrameReader reader = new FrameReader(Fds::closeQuietly);
  /** Guards the outbound buffer; a MountedLock, as writers of virtual threads send CommitData. */
  private final MountedLock sendLock = new MountedLock();
  private final OutboundBuffer out = new OutboundBuffer(MAX_SEND_BUFFER_BYTES); // guarded by sendLock
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong lastRequestId = new AtomicLong();
  private final int[] receivedFd = {-1};
  private final FrameSink sink = this::onFrame;
  private long token;
  private boolean writeInterest; // guarded by sendLock
  private volatile boolean closed; // written under sendLock

  private IpcClient(UnixSocket socket, String address, ConnectionListener listener) throws ErrnoException {
    this.socket = socket;
    this.address = address;
    this.listener = listener;
    this.loop = new EventLoop("jperfetto-ipc-client " + address);
  }

  /**
   * Connects to the host at {@code socketPath} ("@name" for the abstract namespace; a
   * {@code host:port} address connects over TCP, where no descriptor can be passed).
   */
  public static IpcClient connect(String socketPath) throws IOException {
    return connect(socketPath, cause -> { });
  }

  /** Connects, with {@code listener} told when the connection ends. */
  public static IpcClient connect(String socketPath, ConnectionListener listener) throws IOException {
    UnixSocket socket = TcpSockets.isTcp(socketPath) ? TcpSockets.connect(socketPath) : UnixSocket.connect(socketPath);
    IpcClient client;
    try {
      socket.setNonBlocking(true);
      client = new IpcClient(socket, socketPath, listener);
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
    try {
      client.loop.runAndWait(() -> client.token = client.loop.register(socket.fd(), READ_EVENTS, client::onEvents));
    } catch (InterruptedException | ErrnoException e) {
      client.loop.close();
      socket.close();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IOException("registering the connection to " + socketPath, e);
    }
    return client;
  }

  /** True over TCP: no descriptor can travel, shared memory must be emulated. */
  public boolean isTcp() {
    return socket.isTcp();
  }

  public boolean isConnected() {
    return !closed;
  }

  /**
   * Sends SetPeerIdentity, as a relay does first on its TCP connection to the host: the pid and uid
   * of the process it speaks for and its machine's id hint and name. A host ignores it on AF_UNIX.
   */
  public void setPeerIdentity(int pid, int uid, String machineIdHint, String machineName) throws IpcException {
    IPCFrame frame = IPCFrame.newBuilder().setRequestId(0)
        .setSetPeerIdentity(IPCFrame.SetPeerIdentity.newBuilder().setPid(pid).setUid(uid)
            .setMachineIdHint(machineIdHint).setMachineName(machineName)).build();
    IpcException failure = send(frame, -1);
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Binds {@code serviceName}; the future fails with SERVICE_NOT_FOUND if the host does not expose
   * it.
   */
  public CompletableFuture<BoundService> bind(String serviceName) {
    CompletableFuture<BoundService> future = new CompletableFuture<>();
    long requestId = lastRequestId.incrementAndGet();
    pending.put(requestId, new PendingBind(serviceName, future));
    IPCFrame frame = IPCFrame.newBuilder().setRequestId(requestId)
        .setMsgBindService(IPCFrame.BindService.newBuilder().setServiceName(serviceName)).build();
    IpcException failure = send(frame, -1);
    if (failure != null) {
      pending.remove(requestId);
      future.completeExceptionally(failure);
    }
    return future;
  }

  CompletableFuture<Reply> invoke(BoundService service, String method, ByteString args, int fd,
      ReplyListener streamListener) {
    CompletableFuture<Reply> future = new CompletableFuture<>();
    int methodId = service.methodId(method);
    if (methodId == 0) {
      Fds.closeQuietly(fd);
      future.completeExceptionally(methodNotFound(service, method));
      return future;
    }
    long requestId = lastRequestId.incrementAndGet();
    pending.put(requestId, new PendingCall(service.name() + "." + method, future, streamListener));
    IpcException failure = send(invokeFrame(service, methodId, requestId, args, false), fd);
    if (failure != null) {
      pending.remove(requestId);
      future.completeExceptionally(failure);
    }
    return future;
  }

  void invokeNoReply(BoundService service, String method, ByteString args, int fd) throws IpcException {
    int methodId = service.methodId(method);
    if (methodId == 0) {
      Fds.closeQuietly(fd);
      throw methodNotFound(service, method);
    }
    long requestId = lastRequestId.incrementAndGet();
    IpcException failure = send(invokeFrame(service, methodId, requestId, args, true), fd);
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * As {@link #invokeNoReply(BoundService, String, ByteString, int)} with args already encoded in
   * {@code args[offset..offset+length)}: the frame is written straight into the send buffer, no
   * message object made. The caller may reuse the array as soon as this returns.
   */
  void invokeNoReply(BoundService service, String method, byte[] args, int offset, int length)
      throws IpcException {
    int methodId = service.methodId(method);
    if (methodId == 0) {
      throw methodNotFound(service, method);
    }
    long requestId = lastRequestId.incrementAndGet();
    IpcException failure;
    sendLock.lock();
    try {
      if (closed) {
        throw notConnected();
      }
      try {
        if (!out.appendInvoke(requestId, service.serviceId(), methodId, args, offset, length, true)) {
          throw sendBufferFull();
        }
      } catch (IllegalArgumentException e) {
        throw new IpcException(IpcException.Kind.SEND_FAILED, e.getMessage(), e);
      }
      failure = flushLocked();
    } finally {
      sendLock.unlock();
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static IPCFrame invokeFrame(BoundService service, int methodId, long requestId,
      ByteString args, boolean dropReply) {
    // drop_reply is always written, false included, as upstream's client does.
    IPCFrame.InvokeMethod.Builder invoke = IPCFrame.InvokeMethod.newBuilder()
        .setServiceId(service.serviceId()).setMethodId(methodId).setArgsProto(args)
        .setDropReply(dropReply);
    return IPCFrame.newBuilder().setRequestId(requestId).setMsgInvokeMethod(invoke).build();
  }

  private static IpcException methodNotFound(BoundService service, String method) {
    return new IpcException(IpcException.Kind.METHOD_NOT_FOUND,
        "method " + method + " not found in service " + service.name() + " (the host announced "
            + service.methodIds().size() + " methods)");
  }

  /** Queues and writes {@code frame}; returns why it could not be sent, or null. */
  private IpcException send(IPCFrame frame, int fd) {
    sendLock.lock();
    try {
      if (closed) {
        Fds.closeQuietly(fd);
        return notConnected();
      }
      try {
        if (!out.append(frame, fd)) {
          return sendBufferFull();
        }
      } catch (IllegalArgumentException e) {
        return new IpcException(IpcException.Kind.SEND_FAILED, e.getMessage(), e);
      }
      return flushLocked();
    } finally {
      sendLock.unlock();
    }
  }

  private IpcException notConnected() {
    return new IpcException(IpcException.Kind.CONNECTION_LOST, "not connected to " + address);
  }

  private IpcException sendBufferFull() {
    return new IpcException(IpcException.Kind.SEND_FAILED, "send buffer full ("
        + out.pendingBytes() + " bytes pending, max " + MAX_SEND_BUFFER_BYTES + ") on " + address);
  }

  /** Sends what the socket takes now of a frame just queued (under sendLock). */
  private IpcException flushLocked() {
    if (writeInterest) {
      return null; // the loop flushes when the socket drains
    }
    try {
      if (!out.flush(socket)) {
        writeInterest = true;
        loop.execute(this::updateInterest);
      }
      return null;
    } catch (ErrnoException e) {
      IpcException lost = new IpcException(IpcException.Kind.CONNECTION_LOST,
          "sending to " + address + " failed: " + e.getMessage(), e);
      loop.execute(() -> disconnect(lost));
      return null; // the request is pending: disconnect fails it with the others
    }
  }

  private void updateInterest() {
    sendLock.lock();
    try {
      if (closed) {
        return;
      }
      try {
        loop.modify(socket.fd(), writeInterest ? READ_EVENTS | Epoll.OUT : READ_EVENTS, token);
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "epoll modify for " + address + ": " + e.getMessage());
      }
    } finally {
      sendLock.unlock();
    }
  }

  private void onEvents(int events) {
    if ((events & Epoll.OUT) != 0) {
      sendLock.lock();
      try {
        if (closed) {
          return;
        }
        try {
          if (out.flush(socket)) {
            writeInterest = false;
            updateInterest();
          }
        } catch (ErrnoException e) {
          disconnect(new IpcException(IpcException.Kind.CONNECTION_LOST,
              "sending to " + address + " failed: " + e.getMessage(), e));
          return;
        }
      } finally {
        sendLock.unlock();
      }
    }
    if ((events & (Epoll.IN | Epoll.HUP | Epoll.ERR | Epoll.RDHUP)) != 0) {
      read();
    }
  }

  private void read() {
    for (int i = 0; i < READS_PER_EVENT && !closed; i++) {
      long n;
      try {
        receivedFd[0] = -1;
        n = socket.receive(reader.receiveBuffer(), reader.receiveOffset(), reader.receiveSpace(),
            receivedFd);
      } catch (ErrnoException e) {
        disconnect(new IpcException(IpcException.Kind.CONNECTION_LOST,
            "receiving from " + address + " failed: " + e.getMessage(), e));
        return;
      }
      if (n < 0) {
        return;
      }
      if (n == 0) {
        disconnect(new IpcException(IpcException.Kind.CONNECTION_LOST, "host closed the connection " + address));
        return;
      }
      if (!reader.endReceive((int) n, receivedFd[0], sink)) {
        disconnect(new IpcException(IpcException.Kind.CONNECTION_LOST,
            "protocol error from " + address + ": " + reader.failure().message()));
        return;
      }
    }
  }

  private void onFrame(IPCFrame frame, int fd) {
    long requestId = frame.getRequestId();
    Pending request = pending.get(requestId);
    if (request == null) {
      LOG.log(Level.DEBUG, () -> "reply for unknown request_id=" + requestId + " from " + address);
      Fds.closeQuietly(fd);
      return;
    }
    switch (request) {
      case PendingBind bind when frame.hasMsgBindServiceReply() -> {
        Fds.closeQuietly(fd);
        pending.remove(requestId);
        completeBind(bind, frame.getMsgBindServiceReply());
      }
      case PendingCall call when frame.hasMsgInvokeMethodReply() ->
          onInvokeReply(requestId, call, frame.getMsgInvokeMethodReply(), fd);
      default -> {
        Fds.closeQuietly(fd);
        pending.remove(requestId);
        String error = frame.hasMsgRequestError() ? "host error: " + frame.getMsgRequestError().getError()
            : "unexpected " + frame.getMsgCase() + " in answer to request_id=" + requestId;
        fail(request, new IpcException(IpcException.Kind.REQUEST_ERROR, error));
      }
    }
  }

  private void completeBind(PendingBind bind, IPCFrame.BindServiceReply reply) {
    if (!reply.getSuccess()) {
      bind.future().completeExceptionally(new IpcException(IpcException.Kind.SERVICE_NOT_FOUND,
          "service " + bind.serviceName() + " not found on " + address));
      return;
    }
    Map<String, Integer> methods = new HashMap<>();
    for (IPCFrame.BindServiceReply.MethodInfo method : reply.getMethodsList()) {
      if (!method.getName().isEmpty() && method.getId() > 0) {
        methods.put(method.getName(), method.getId());
      }
    }
    bind.future().complete(new BoundService(this, bind.serviceName(), reply.getServiceId(), methods));
  }

  private void onInvokeReply(long requestId, PendingCall call, IPCFrame.InvokeMethodReply reply, int fd) {
    if (!reply.getSuccess()) {
      Fds.closeQuietly(fd);
      pending.remove(requestId);
      call.future().completeExceptionally(new IpcException(IpcException.Kind.REQUEST_FAILED,
          call.what() + " failed on the host (request_id=" + requestId + ")"));
      return;
    }
    Reply result = new Reply(reply.getReplyProto(), reply.getHasMore(), fd);
    if (call.listener() != null) {
      try {
        call.listener().onReply(result);
      } catch (RuntimeException e) {
        LOG.log(Level.ERROR, "reply listener of " + call.what() + " failed", e);
      }
    } else if (result.hasMore()) {
      Fds.closeQuietly(fd); // a plain invoke only wants the final reply
    }
    if (!result.hasMore()) {
      pending.remove(requestId);
      call.future().complete(result);
    }
  }

  private static void fail(Pending request, IpcException e) {
    switch (request) {
      case PendingBind bind -> bind.future().completeExceptionally(e);
      case PendingCall call -> call.future().completeExceptionally(e);
    }
  }

  /** Loop thread only. */
  private void disconnect(IpcException cause) {
    sendLock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      out.close();
    } finally {
      sendLock.unlock();
    }
    loop.unregister(socket.fd(), token);
    socket.close();
    reader.close();
    for (Long requestId : pending.keySet()) {
      Pending request = pending.remove(requestId);
      if (request != null) {
        fail(request, new IpcException(IpcException.Kind.CONNECTION_LOST,
            "connection to " + address + " lost before the answer: " + cause.getMessage(), cause));
      }
    }
    try {
      listener.onDisconnected(cause);
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "connection listener failed", e);
    }
  }

  /** Closes the connection (pending calls fail) and stops the I/O thread. Idempotent. */
  @Override
  public void close() {
    loop.execute(() -> disconnect(new IpcException(IpcException.Kind.CONNECTION_LOST,
        "client closed the connection to " + address)));
    loop.close();
  }
}
