package org.jperfetto.ipc;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.ipc.wire.FrameSink;
import org.jperfetto.ipc.wire.RawInvoke;
import org.jperfetto.os.Epoll;
import org.jperfetto.os.Errno;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.PeerCredentials;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;

/**
 * The service side of Perfetto's IPC: listens on an AF_UNIX (or TCP) socket and serves the exposed services
 * to every client that connects, all on one event-loop thread.
 *
 * <p>Protocol, as upstream's host does it: BindService answers with the service id (services are
 * numbered from 1 in the order given) and its methods (ids from 1 in declaration order), or with
 * success unset for an unknown name; InvokeMethod runs the handler of (service_id, method_id), and
 * an unknown service or method gets a failed InvokeMethodReply, the connection staying up;
 * SetPeerIdentity is ignored on AF_UNIX (SO_PEERCRED is authoritative) and names a TCP client's
 * pid, uid and machine (see {@link ClientInfo}); any other frame gets a RequestError. An fd
 * received with a request is handed to that request's handler.
 *
 * <p>Threading: handlers and {@link ServiceListener} callbacks run on the loop thread, one at a time
 * (the service is single-threaded, like upstream's), and must not block. A slow peer never blocks
 * the loop: sockets are non-blocking, each peer's unsent replies are bounded by
 * {@link #MAX_SEND_BUFFER_BYTES}, and a peer that lets them pile up past it, or takes none of them
 * for the send timeout ({@link #setSendTimeoutMs}), is dropped.
 */
public final class IpcHost implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(IpcHost.class.getName());

  /** Unsent bytes a peer may have pending before it is dropped. */
  public static final int MAX_SEND_BUFFER_BYTES = 4 * 1024 * 1024;
  /**
   * How long a peer may leave its socket full (replies pending, none taken) before it is dropped:
   * upstream's default IPC send timeout (kDefaultIpcTxTimeoutMs), which its consumer socket uses.
   */
  public static final long DEFAULT_SEND_TIMEOUT_MS = 10_000;
  /** Upstream's send timeout on the producer socket (kProducerSocketTxTimeoutMs). */
  public static final long PRODUCER_SEND_TIMEOUT_MS = 10;

  static final int LISTEN_BACKLOG = 128;
  /** First and longest pause of the listener after a failed accept. */
  static final long ACCEPT_RETRY_MIN_MS = 50;
  static final long ACCEPT_RETRY_MAX_MS = 1000;
  /** At most one line per uid per interval about what that uid's peers sent. */
  static final long PEER_LOG_INTERVAL_MS = 5000;
  private static final int MAX_PEER_LOGS = 1024;
  /** Reads per connection per readiness event, so one busy peer cannot starve the others. */
  public static final int DEFAULT_READS_PER_EVENT = 16;
  private static final int READ_EVENTS = Epoll.IN | Epoll.RDHUP;
  /** A TCP peer before (or without) SetPeerIdentity: pid unknown, uid 0, as upstream's host. */
  private static final PeerCredentials TCP_PEER = new PeerCredentials(0, 0, -1);

  private final UnixSocket listener;
  private final List<ServiceDefinition> services;
  private final EventLoop loop;
  /** False when the loop is shared (given to {@link #start(UnixSocket, List, EventLoop)}). */
  private final boolean ownsLoop;
  private final Map<Long, Connection> connections = new HashMap<>();
  private long listenerToken;
  private long lastClientId;
  /** The listener's current pause after failed accepts, 0 while accepting normally. */
  private long acceptRetryMs;
  private final RateLimitedLog acceptFailureLog = new RateLimitedLog(LOG, 10_000);
  private final Map<Integer, RateLimitedLog> peerLogs = new HashMap<>();
  private volatile boolean closed;

  private volatile int connectionCount;
  private volatile long accepted;
  private volatile long dropped;
  private volatile long framesTooLarge;
  private volatile long malformedFrames;
  private volatile long sendOverflows;
  private volatile long invocations;
  private volatile long rejectedRequests;
  private volatile long acceptFailures;
  private volatile long sendTimeouts;
  private volatile long receives;
  private volatile long readCapHits;
  private volatile int readsPerEvent = DEFAULT_READS_PER_EVENT;
  private volatile long sendTimeoutMs = DEFAULT_SEND_TIMEOUT_MS;

  private IpcHost(UnixSocket listener, List<ServiceDefinition> services, EventLoop loop, boolean ownsLoop) {
    this.listener = listener;
    this.services = List.copyOf(services);
    this.loop = loop;
    this.ownsLoop = ownsLoop;
  }

  /** Listens on {@code socketPath} ("@name" for the abstract namespace) and starts serving. */
  public static IpcHost start(String socketPath, List<ServiceDefinition> services) throws IOException {
    UnixSocket listener = UnixSocket.listen(socketPath, LISTEN_BACKLOG);
    try {
      return start(listener, services);
    } catch (IOException | RuntimeException e) {
      listener.close();
      throw e;
    }
  }

  /** Serves on an already listening socket (the host owns it from now on), on a loop of its own. */
  public static IpcHost start(UnixSocket listening, List<ServiceDefinition> services) throws IOException {
    checkUniqueNames(services);
    EventLoop own = new EventLoop("jperfetto-ipc-host " + listening.address());
    return start(listening, services, own, true);
  }

  /**
   * Serves on an already listening socket (the host owns it from now on) on {@code loop}, which
   * other hosts and the service's own tasks may share; {@link #close()} leaves the loop running.
   */
  public static IpcHost start(UnixSocket listening, List<ServiceDefinition> services, EventLoop loop)
      throws IOException {
    checkUniqueNames(services);
    return start(listening, services, loop, false);
  }

  private static IpcHost start(UnixSocket listening, List<ServiceDefinition> services, EventLoop loop,
      boolean ownsLoop) throws IOException {
    IpcHost host = new IpcHost(listening, services, loop, ownsLoop);
    try {
      listening.setNonBlocking(true);
    } catch (IOException | RuntimeException e) {
      host.stopLoop();
      throw e;
    }
    try {
      host.loop.runAndWait(
          () -> host.listenerToken = host.loop.register(listening.fd(), Epoll.IN, events -> host.acceptAll()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      host.stopLoop();
      throw new IOException("interrupted while starting the IPC host", e);
    } catch (ErrnoException e) {
      host.stopLoop();
      throw new IOException("registering the listening socket " + listening.address(), e);
    }
    return host;
  }

  private static void checkUniqueNames(List<ServiceDefinition> services) {
    for (int i = 0; i < services.size(); i++) {
      for (int j = 0; j < i; j++) {
        if (services.get(i).name().equals(services.get(j).name())) {
          throw new IllegalArgumentException("service exposed twice: " + services.get(i).name());
        }
      }
    }
  }

  /** The services, in service-id order (id = index + 1). */
  public List<ServiceDefinition> services() {
    return services;
  }

  /** The address the host listens on. */
  public String address() {
    return listener.address();
  }

  /** Runs {@code task} on the host's loop thread (where handlers run). */
  public void execute(Runnable task) {
    loop.execute(task);
  }

  /** True on the host's loop thread. */
  public boolean inLoop() {
    return loop.inLoop();
  }

  /**
   * Reads per connection per readiness event ({@value #DEFAULT_READS_PER_EVENT} unless set). jtraced's
   * JIT warm-up lowers it on its private host so that its traffic also ends reads the way a peer
   * that keeps sending does: a path the compiled loop would otherwise not have, and would be
   * thrown away for when a real burst first took it.
   */
  public void readsPerEvent(int reads) {
    if (reads < 1) {
      throw new IllegalArgumentException("reads per event must be at least 1: " + reads);
    }
    readsPerEvent = reads;
  }

  public HostStats stats() {
    return new HostStats(connectionCount, accepted, dropped, framesTooLarge, malformedFrames,
        sendOverflows, invocations, rejectedRequests, acceptFailures, sendTimeouts, receives, readCapHits);
  }

  /**
   * Sets how long a peer may leave replies unsent (its socket full, no byte taken) before it is
   * dropped, for sends from now on. Upstream blocks its thread in sendmsg up to this long and then
   * shuts the socket down; this host never blocks, it checks the stall on a timer, so one peer that
   * stops reading costs the others nothing in the meantime.
   */
  public void setSendTimeoutMs(long timeoutMs) {
    if (timeoutMs <= 0) {
      throw new IllegalArgumentException("send timeout must be positive: " + timeoutMs);
    }
    sendTimeoutMs = timeoutMs;
  }

  /**
   * Closes the connection of {@code clientId} (e.g. a service dropping a misbehaving client), as
   * if it had sent a bad frame: its services hear {@link ServiceListener#onClientDisconnected}.
   * Any thread; nothing happens if the client is already gone.
   */
  public void disconnect(long clientId, String reason) {
    loop.execute(() -> {
      Connection connection = connections.get(clientId);
      if (connection != null) {
        connection.drop(reason, true);
      }
    });
  }

  private void acceptAll() {
    while (!closed) {
      UnixSocket socket;
      try {
        socket = listener.accept();
      } catch (ErrnoException e) {
        if (e.errno() == Errno.ECONNABORTED) {
          continue; // that peer gave up while queued; the next one may be fine
        }
        pauseAccepting(e);
        return;
      }
      if (socket == null) {
        return;
      }
      if (acceptRetryMs != 0) {
        LOG.log(Level.INFO, "accepting on " + listener.address() + " again after " + acceptFailures
            + " failed accept(s) in all");
        acceptRetryMs = 0;
      }
      try {
        socket.setNonBlocking(true);
        ClientInfo info = socket.isTcp()
            ? new ClientInfo(++lastClientId, TCP_PEER, 0, "", true)
            : new ClientInfo(++lastClientId, socket.peerCredentials());
        Connection connection = new Connection(socket, info);
        connection.token = loop.register(socket.fd(), READ_EVENTS, connection);
        connections.put(connection.client.clientId(), connection);
        accepted++;
        connectionCount = connections.size();
      } catch (ErrnoException e) {
        acceptFailureLog.log(Level.WARNING, "setting up an accepted connection on "
            + listener.address() + " failed: " + e.getMessage());
        socket.close();
      }
    }
  }

  /**
   * accept failed (EMFILE/ENFILE: out of descriptors, ENOBUFS/ENOMEM, ...): the pending connection
   * stays queued and a level-triggered listener would be ready again at once, so stop watching it
   * and retry after a delay that doubles up to {@link #ACCEPT_RETRY_MAX_MS}. Connections already
   * accepted are served meanwhile. Upstream's host simply returns and is woken again right away.
   */
  private void pauseAccepting(ErrnoException e) {
    acceptFailures++;
    acceptRetryMs = acceptRetryMs == 0 ? ACCEPT_RETRY_MIN_MS : Math.min(2 * acceptRetryMs, ACCEPT_RETRY_MAX_MS);
    acceptFailureLog.log(Level.WARNING, "accept on " + listener.address() + " failed: " + e.getMessage()
        + "; not accepting new connections for " + acceptRetryMs + " ms (open connections: "
        + connections.size() + ")");
    try {
      loop.modify(listener.fd(), 0, listenerToken);
    } catch (ErrnoException m) {
      LOG.log(Level.ERROR, "pausing the listener " + listener.address() + ": " + m.getMessage());
    }
    loop.schedule(this::resumeAccepting, acceptRetryMs);
  }

  private void resumeAccepting() {
    if (closed) {
      return;
    }
    try {
      loop.modify(listener.fd(), Epoll.IN, listenerToken);
    } catch (ErrnoException e) {
      LOG.log(Level.ERROR, "resuming the listener " + listener.address() + ": " + e.getMessage());
    }
  }

  /** One client connection; all of it runs on the loop thread except {@link #sendReply}. */
  private final class Connection implements EventLoop.Handler, FrameSink, MethodCall.ReplyChannel,
      RawCall.Replies {
    final UnixSocket socket;
    ClientInfo client; // replaced once by a TCP peer's SetPeerIdentity
    boolean identitySet;
    final FrameReader reader = new FrameReader(Fds::closeQuietly);
    final OutboundBuffer out = new OutboundBuffer(MAX_SEND_BUFFER_BYTES);
    final BitSet boundServices = new BitSet();
    final int[] receivedFd = {-1};
    final RawInvoke rawInvoke = new RawInvoke();
    RawCall rawCall;
    long token;
    boolean writeInterest;
    boolean closed;
    /** When the peer last took bytes while replies were pending (stall start), or 0 if none are. */
    long stalledSinceNanos;
    EventLoop.Timer sendTimer;
    /** Reply bytes handed over from other threads and not yet appended to {@link #out}. */
    final java.util.concurrent.atomic.AtomicLong inTransit = new java.util.concurrent.atomic.AtomicLong();
    /** {@link #out}'s pending bytes as of the loop's last append or flush. */
    volatile long unsent;
    /** Run once the unsent bytes are down to {@link #drainBelowBytes} (loop thread only). */
    Runnable drainWaiter;
    long drainBelowBytes;

    Connection(UnixSocket socket, ClientInfo client) {
      this.socket = socket;
      this.client = client;
    }

    @Override
    public void onEvents(int events) {
      if ((events & Epoll.OUT) != 0) {
        flush();
      }
      if ((events & (Epoll.IN | Epoll.HUP | Epoll.ERR | Epoll.RDHUP)) != 0) {
        read();
      }
    }

    private void read() {
      int limit = readsPerEvent;
      for (int i = 0; i < limit && !closed; i++) {
        long n;
        try {
          receivedFd[0] = -1;
          n = socket.receive(reader.receiveBuffer(), reader.receiveOffset(), reader.receiveSpace(),
              receivedFd);
        } catch (ErrnoException e) {
          drop("receive failed: " + e.getMessage(), !isPeerGone(e));
          return;
        }
        if (n < 0) {
          return;
        }
        if (n == 0) {
          drop("peer closed the connection", false);
          return;
        }
        receives++;
        if (!reader.endReceive((int) n, receivedFd[0], this)) {
          FrameReader.Failure failure = reader.failure();
          switch (failure.kind()) {
            case FRAME_TOO_LARGE -> framesTooLarge++;
            case MALFORMED_FRAME -> malformedFrames++;
            case CLOSED -> { } // dropped while handling a frame; already counted
            default -> throw new IllegalStateException("unknown frame failure kind " + failure.kind());
          }
          drop(failure.message(), true);
          return;
        }
      }
      if (!closed) {
        readCapHits++; // the peer still has data: the loop comes back to it on its next turn
      }
    }

    @Override
    public void onFrame(IPCFrame frame, int fd) {
      if (closed) {
        if (fd >= 0) {
          Fds.closeQuietly(fd);
        }
        return;
      }
      switch (frame.getMsgCase()) {
        case MSG_BIND_SERVICE -> {
          Fds.closeQuietly(fd);
          onBindService(frame);
        }
        case MSG_INVOKE_METHOD -> onInvokeMethod(frame, fd);
        case SET_PEER_IDENTITY -> {
          Fds.closeQuietly(fd);
          onSetPeerIdentity(frame.getSetPeerIdentity());
        }
        default -> {
          Fds.closeQuietly(fd);
          rejectedRequests++;
          send(IPCFrame.newBuilder().setRequestId(frame.getRequestId())
              .setMsgRequestError(IPCFrame.RequestError.newBuilder().setError("unknown request"))
              .build(), -1);
        }
      }
    }

    /**
     * AF_UNIX: ignored, the kernel's credentials stand. TCP: taken once, as upstream's host does,
     * and only before the client bound a service (a relay sends it as its first frame), so every
     * service sees one identity per client.
     */
    private void onSetPeerIdentity(IPCFrame.SetPeerIdentity identity) {
      if (!socket.isTcp() || identitySet || !boundServices.isEmpty()) {
        LOG.log(Level.DEBUG, () -> "client " + client.clientId() + ": SetPeerIdentity ignored");
        return;
      }
      identitySet = true;
      String peerHost;
      try {
        peerHost = org.jperfetto.os.TcpSockets.peer(socket).host();
      } catch (ErrnoException e) {
        peerHost = socket.address();
      }
      int machineId = ClientInfo.machineIdOf(identity.getMachineIdHint(), peerHost);
      client = new ClientInfo(client.clientId(), new PeerCredentials(identity.getPid(), identity.getUid(), -1),
          machineId, identity.getMachineName(), true);
      LOG.log(Level.INFO, "TCP client " + client.clientId() + " from " + peerHost + " is machine "
          + Integer.toUnsignedString(machineId) + " (\"" + identity.getMachineName() + "\"), pid "
          + identity.getPid() + " uid " + identity.getUid());
    }

    /** An InvokeMethod of a method with a {@link RawMethodHandler}, served without decoding. */
    @Override
    public boolean onRawFrame(MemorySegment buffer, long offset, int length) {
      if (closed || !rawInvoke.read(buffer, offset, length)) {
        return false;
      }
      ServiceDefinition service = serviceOf(rawInvoke.serviceId());
      ServiceDefinition.Method method = service == null ? null : methodOf(service, rawInvoke.methodId());
      RawMethodHandler raw = method == null ? null : method.raw();
      if (raw == null) {
        return false; // unknown ids are answered by the regular path
      }
      if (rawCall == null) {
        rawCall = new RawCall(client, this);
      }
      RawCall call = rawCall;
      call.reset(rawInvoke.requestId(), buffer, rawInvoke.argsOffset(), rawInvoke.argsLength(),
          !rawInvoke.dropReply());
      boolean served;
      try {
        served = raw.handle(call);
      } catch (RuntimeException e) {
        LOG.log(Level.ERROR, "raw handler of " + service.name() + "." + method.name() + " failed", e);
        served = true;
      }
      if (!served && !call.answered()) {
        return false; // declined: the regular handler gets it
      }
      invocations++;
      if (!call.answered()) {
        call.fail();
      }
      return true;
    }

    @Override
    public void replyEmpty(long requestId) {
      if (!closed) {
        afterAppend(out.appendEmptyReply(requestId));
      }
    }

    @Override
    public void replyFailed(long requestId) {
      send(MethodCall.failedReply(requestId), -1);
    }

    private void onBindService(IPCFrame request) {
      String name = request.getMsgBindService().getServiceName();
      IPCFrame.BindServiceReply.Builder reply = IPCFrame.BindServiceReply.newBuilder();
      int index = indexOf(name);
      if (index >= 0) {
        ServiceDefinition service = services.get(index);
        reply.setSuccess(true).setServiceId(index + 1);
        List<ServiceDefinition.Method> methods = service.methods();
        for (int i = 0; i < methods.size(); i++) {
          reply.addMethods(IPCFrame.BindServiceReply.MethodInfo.newBuilder()
              .setName(methods.get(i).name()).setId(i + 1));
        }
      } else {
        rejectedRequests++;
        LOG.log(Level.DEBUG, () -> "client " + client.clientId() + " bound unknown service " + name);
      }
      send(IPCFrame.newBuilder().setRequestId(request.getRequestId()).setMsgBindServiceReply(reply)
          .build(), -1);
      if (index >= 0 && !boundServices.get(index)) {
        boundServices.set(index);
        ServiceDefinition service = services.get(index);
        try {
          service.listener().onClientBound(client);
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "onClientBound of " + service.name() + " failed", e);
        }
      }
    }

    private void onInvokeMethod(IPCFrame request, int fd) {
      IPCFrame.InvokeMethod invoke = request.getMsgInvokeMethod();
      long requestId = request.getRequestId();
      int serviceId = invoke.getServiceId();
      int methodId = invoke.getMethodId();
      ServiceDefinition service = serviceOf(serviceId);
      if (service == null || methodOf(service, methodId) == null) {
        Fds.closeQuietly(fd);
        rejectedRequests++;
        LOG.log(Level.DEBUG, () -> "client " + client.clientId() + " invoked unknown method: service_id="
            + serviceId + " method_id=" + methodId);
        send(MethodCall.failedReply(requestId), -1); // even with drop_reply, as upstream
        return;
      }
      ServiceDefinition.Method method = service.methods().get(methodId - 1);
      MethodCall call = new MethodCall(this, client, service.name(), method.name(), methodId,
          requestId, invoke.getArgsProto(), !invoke.getDropReply(), fd);
      invocations++;
      try {
        method.handler().handle(call);
      } catch (InvalidProtocolBufferException e) { // the peer's bytes, not our bug: no stack trace
        peerLog(client).log(Level.WARNING, "client " + client.clientId() + " (pid " + client.pid()
            + " uid " + client.uid() + ") sent undecodable arguments to " + service.name() + "."
            + method.name() + ": " + e.getMessage());
        if (!call.isDone()) {
          call.fail();
        }
      } catch (Exception e) {
        LOG.log(Level.ERROR, "handler of " + call + " failed", e);
        if (!call.isDone()) {
          call.fail();
        }
      } finally {
        call.closeUntakenFd();
      }
    }

    @Override
    public void sendReply(IPCFrame frame, int fd) {
      if (loop.inLoop()) {
        send(frame, fd);
        return;
      }
      long size = frame.getSerializedSize();
      // Replies handed over from other threads count against the same bound as the queue they
      // go to: past it the peer is dropped now, not once the loop got around to the backlog.
      if (inTransit.addAndGet(size) + unsent > MAX_SEND_BUFFER_BYTES) {
        inTransit.addAndGet(-size);
        Fds.closeQuietly(fd);
        loop.execute(() -> {
          if (!closed) {
            sendOverflows++;
            drop("send buffer overflow: replies handed over faster than the peer drains them"
                + " (pending=" + (inTransit.get() + out.pendingBytes()) + " max=" + MAX_SEND_BUFFER_BYTES + ")", true);
          }
        });
        return;
      }
      loop.execute(() -> {
        inTransit.addAndGet(-size);
        send(frame, fd);
      });
    }

    @Override
    public long unsentBytes() {
      return closed ? 0 : inTransit.get() + unsent;
    }

    @Override
    public void whenUnsentBelow(long bytes, Runnable task) {
      if (!loop.inLoop()) {
        loop.execute(() -> whenUnsentBelow(bytes, task));
        return;
      }
      if (closed) {
        return;
      }
      drainWaiter = task;
      drainBelowBytes = bytes;
      wakeDrainWaiter();
    }

    /** Runs the drain waiter (as a loop task of its own, not inside a flush) if its mark is met. */
    private void wakeDrainWaiter() {
      Runnable task = drainWaiter;
      if (task != null && !closed && out.pendingBytes() + inTransit.get() <= drainBelowBytes) {
        drainWaiter = null;
        loop.execute(task);
      }
    }

    private void send(IPCFrame frame, int fd) {
      if (closed) {
        Fds.closeQuietly(fd);
        return;
      }
      afterAppend(out.append(frame, fd));
    }

    /** Sends what was just queued (appended false: the queue is over its bound). */
    private void afterAppend(boolean appended) {
      if (!appended) {
        sendOverflows++;
        drop("send buffer overflow: the peer is not draining its replies (pending="
            + out.pendingBytes() + " max=" + MAX_SEND_BUFFER_BYTES + ")", true);
        return;
      }
      if (!writeInterest) {
        flush();
      }
      unsent = out.pendingBytes();
    }

    private void flush() {
      try {
        long before = out.pendingBytes();
        boolean wantWrite = !out.flush(socket);
        unsent = out.pendingBytes();
        watchSendStall(wantWrite, unsent < before);
        if (unsent < before) {
          wakeDrainWaiter();
        }
        if (wantWrite != writeInterest) {
          writeInterest = wantWrite;
          loop.modify(socket.fd(), wantWrite ? READ_EVENTS | Epoll.OUT : READ_EVENTS, token);
        }
      } catch (ErrnoException e) {
        drop("send failed: " + e.getMessage(), !isPeerGone(e));
      }
    }

    /** Starts, restarts (progress made) or ends the stall clock of the send timeout. */
    private void watchSendStall(boolean pending, boolean progressed) {
      if (!pending) {
        stalledSinceNanos = 0;
        return;
      }
      if (stalledSinceNanos == 0 || progressed) {
        stalledSinceNanos = System.nanoTime();
      }
      if (sendTimer == null) {
        sendTimer = loop.schedule(this::checkSendStall, sendTimeoutMs);
      }
    }

    private void checkSendStall() {
      sendTimer = null;
      if (closed || stalledSinceNanos == 0) {
        return;
      }
      flush(); // the peer may have read since the last OUT event we handled
      if (closed || stalledSinceNanos == 0) {
        return;
      }
      long timeoutMs = sendTimeoutMs;
      long stalledMs = (System.nanoTime() - stalledSinceNanos) / 1_000_000;
      if (stalledMs >= timeoutMs) {
        sendTimeouts++;
        drop("send timeout: the peer took none of its pending replies for " + stalledMs
            + " ms (pending=" + out.pendingBytes() + " timeout=" + timeoutMs + " ms)", true);
      } else {
        sendTimer = loop.schedule(this::checkSendStall, timeoutMs - stalledMs);
      }
    }

    void drop(String reason, boolean error) {
      if (closed) {
        return;
      }
      closed = true;
      if (error) {
        dropped++;
        peerLog(client).log(Level.WARNING, "dropping IPC client " + client.clientId() + " (pid "
            + client.pid() + " uid " + client.uid() + "): " + reason);
      } else {
        LOG.log(Level.DEBUG, () -> "IPC client " + client.clientId() + ": " + reason);
      }
      if (sendTimer != null) {
        sendTimer.cancel();
        sendTimer = null;
      }
      drainWaiter = null;
      loop.unregister(socket.fd(), token);
      reader.close();
      out.close();
      socket.close();
      connections.remove(client.clientId());
      connectionCount = connections.size();
      for (int i = boundServices.nextSetBit(0); i >= 0; i = boundServices.nextSetBit(i + 1)) {
        ServiceDefinition service = services.get(i);
        try {
          service.listener().onClientDisconnected(client);
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "onClientDisconnected of " + service.name() + " failed", e);
        }
      }
    }
  }

  /**
   * The log of lines caused by what a peer sent (bad frames, undecodable arguments, not draining
   * replies), one line per {@link #PEER_LOG_INTERVAL_MS} per uid, so that a peer reconnecting in a
   * loop cannot turn its bytes into a flood of log lines.
   */
  private RateLimitedLog peerLog(ClientInfo client) {
    if (peerLogs.size() >= MAX_PEER_LOGS && !peerLogs.containsKey(client.uid())) {
      peerLogs.clear(); // bounded: uids are few in practice; forgetting only allows another line
    }
    return peerLogs.computeIfAbsent(client.uid(), uid -> new RateLimitedLog(LOG, PEER_LOG_INTERVAL_MS));
  }

  /**
   * ECONNRESET / EPIPE: the peer closed its end, with replies it had not read yet (a consumer that
   * got its trace and exits does so); a disconnect like any other, not an error.
   */
  private static boolean isPeerGone(ErrnoException e) {
    return e.errno() == Errno.ECONNRESET || e.errno() == Errno.EPIPE;
  }

  /** The service a client invokes by id (ids from 1, in the order given), or null. */
  private ServiceDefinition serviceOf(int serviceId) {
    return serviceId >= 1 && serviceId <= services.size() ? services.get(serviceId - 1) : null;
  }

  /** The method of service with id methodId (ids from 1, in declaration order), or null. */
  private static ServiceDefinition.Method methodOf(ServiceDefinition service, int methodId) {
    return methodId >= 1 && methodId <= service.methods().size() ? service.methods().get(methodId - 1) : null;
  }

  private int indexOf(String serviceName) {
    for (int i = 0; i < services.size(); i++) {
      if (services.get(i).name().equals(serviceName)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Disconnects every client, closes the listening socket and stops the loop if it is the host's
   * own; a shared loop goes on (the clean-up has run on it when this returns). Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Runnable cleanUp = () -> {
      for (Connection connection : new ArrayList<>(connections.values())) {
        connection.drop("host closing", false);
      }
      loop.unregister(listener.fd(), listenerToken);
      listener.close();
    };
    if (ownsLoop) {
      loop.execute(cleanUp);
      loop.close();
    } else if (loop.inLoop()) {
      cleanUp.run();
    } else {
      CompletableFuture<Void> done = new CompletableFuture<>();
      loop.execute(() -> {
        try {
          cleanUp.run();
        } finally {
          done.complete(null);
        }
      });
      try {
        done.get(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        LOG.log(Level.WARNING, "closing the IPC host on " + listener.address() + ": " + e);
      }
    }
  }

  private void stopLoop() {
    if (ownsLoop) {
      loop.close();
    }
  }
}
