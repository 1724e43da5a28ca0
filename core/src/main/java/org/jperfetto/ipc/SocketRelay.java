package org.jperfetto.ipc;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.Epoll;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.PeerCredentials;
import org.jperfetto.os.TcpSockets;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;

/**
 * The forwarding half of a relay (what upstream's traced_relay does for producers): every client
 * that connects to the local listening socket gets a connection of its own to the host, which
 * first receives a SetPeerIdentity frame naming the client (its pid and uid from SO_PEERCRED, this
 * machine's id hint and name), and then every byte the client sends, unchanged; the host's bytes go
 * back unchanged. The relay does not parse the stream: the host's IPC layer judges it. Descriptors
 * a client sends (a producer-provided SMB) cannot travel and are closed; the host learns it serves
 * a remote producer from the transport and answers use_shmem_emulation.
 *
 * <p>All on one event-loop thread; connecting to the host runs on a virtual thread so that a slow
 * host does not hold the loop. Each direction has a {@link #BUFFER_BYTES} buffer: a side whose
 * buffer is full is not read until the other side has taken the bytes (back-pressure, no
 * unbounded queue). Either side closing closes both.
 */
public final class SocketRelay implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(SocketRelay.class.getName());
  /** Bytes buffered per direction of one relayed connection. */
  static final int BUFFER_BYTES = 128 * 1024;

  private final UnixSocket listener;
  private final String hostAddress;
  private final String machineIdHint;
  private final String machineName;
  private final EventLoop loop;
  private final Set<Pair> pairs = new HashSet<>();
  private long listenerToken;
  private volatile boolean closed;
  private volatile long relayed;
  private volatile long failedConnects;

  private SocketRelay(UnixSocket listener, String hostAddress, String machineIdHint, String machineName,
      EventLoop loop) {
    this.listener = listener;
    this.hostAddress = hostAddress;
    this.machineIdHint = machineIdHint;
    this.machineName = machineName;
    this.loop = loop;
  }

  /**
   * Relays every connection to {@code listening} (the relay owns it from now on) to
   * {@code hostAddress} (a {@code host:port} or a socket path).
   */
  public static SocketRelay start(UnixSocket listening, String hostAddress, String machineIdHint,
      String machineName) throws IOException {
    EventLoop loop = new EventLoop("jperfetto-relay " + listening.address());
    SocketRelay relay = new SocketRelay(listening, hostAddress, machineIdHint, machineName, loop);
    try {
      loop.runAndWait(() -> {
        listening.setNonBlocking(true);
        relay.listenerToken = loop.register(listening.fd(), Epoll.IN, events -> relay.acceptAll());
      });
    } catch (InterruptedException | ErrnoException e) {
      loop.close();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IOException("relay on " + listening.address() + " did not start", e);
    }
    return relay;
  }

  public String address() {
    return listener.address();
  }

  /** Connections relayed so far (accepted and connected to the host). */
  public long relayedConnections() {
    return relayed;
  }

  /** Accepted connections dropped because the host could not be reached. */
  public long failedConnects() {
    return failedConnects;
  }

  /** The SetPeerIdentity frame the host gets first for a client with these credentials. */
  static byte[] identityFrame(PeerCredentials peer, String machineIdHint, String machineName) {
    return Frames.encode(IPCFrame.newBuilder().setRequestId(0)
        .setSetPeerIdentity(IPCFrame.SetPeerIdentity.newBuilder().setPid(peer.pid()).setUid(peer.uid())
            .setMachineIdHint(machineIdHint).setMachineName(machineName)).build());
  }

  private void acceptAll() {
    while (!closed) {
      UnixSocket client;
      try {
        client = listener.accept();
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "relay: accept on " + listener.address() + " failed: " + e.getMessage());
        return;
      }
      if (client == null) {
        return;
      }
      PeerCredentials peer;
      try {
        peer = client.peerCredentials();
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "relay: no credentials for a client, dropped: " + e.getMessage());
        client.close();
        continue;
      }
      byte[] hello = identityFrame(peer, machineIdHint, machineName);
      Thread.ofVirtual().name("jperfetto-relay-connect").start(() -> connectHost(client, hello));
    }
  }

  private void connectHost(UnixSocket client, byte[] hello) {
    UnixSocket host;
    try {
      host = TcpSockets.isTcp(hostAddress) ? TcpSockets.connect(hostAddress) : UnixSocket.connect(hostAddress);
    } catch (IOException e) {
      failedConnects++;
      LOG.log(Level.WARNING, "relay: cannot reach the host " + hostAddress + " (" + e.getMessage()
          + "); the producer's connection is closed");
      client.close();
      return;
    }
    loop.execute(() -> {
      if (closed) {
        client.close();
        host.close();
        return;
      }
      try {
        Pair pair = new Pair(client, host, hello);
        pairs.add(pair);
        relayed++;
        pair.start();
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "relay: setting up a relayed connection failed: " + e.getMessage());
        client.close();
        host.close();
      }
    });
  }

  /** One relayed connection: the local client and its connection to the host. Loop thread. */
  private final class Pair {
    private final Arena arena = Arena.ofConfined();
    private final Side client;
    private final Side host;
    private boolean done;

    Pair(UnixSocket clientSocket, UnixSocket hostSocket, byte[] hello) throws ErrnoException {
      client = new Side(clientSocket, arena.allocate(BUFFER_BYTES));
      host = new Side(hostSocket, arena.allocate(BUFFER_BYTES));
      client.peer = host;
      host.peer = client;
      MemorySegment.copy(hello, 0, client.inbound, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, hello.length);
      client.end = hello.length; // the host reads the identity before the client's first byte
    }

    void start() throws ErrnoException {
      client.socket.setNonBlocking(true);
      host.socket.setNonBlocking(true);
      client.token = loop.register(client.socket.fd(), client.interest(), client);
      try {
        host.token = loop.register(host.socket.fd(), host.interest(), host);
      } catch (ErrnoException e) {
        loop.unregister(client.socket.fd(), client.token);
        throw e;
      }
      client.registered = true;
      host.registered = true;
      client.forward();
    }

    void close(String why) {
      if (done) {
        return;
      }
      done = true;
      LOG.log(Level.DEBUG, () -> "relay: connection closed: " + why);
      client.close();
      host.close();
      arena.close();
      pairs.remove(this);
    }

    /**
     * One socket of the pair and the bytes read from it, waiting to go to the peer
     * ({@code inbound[start..end)}).
     */
    private final class Side implements EventLoop.Handler {
      final UnixSocket socket;
      final MemorySegment inbound;
      Side peer;
      long token;
      boolean registered;
      int start;
      int end;
      int events = -1;

      Side(UnixSocket socket, MemorySegment inbound) {
        this.socket = socket;
        this.inbound = inbound;
      }

      int interest() {
        return (end < BUFFER_BYTES ? Epoll.IN | Epoll.RDHUP : 0) | (peer.start < peer.end ? Epoll.OUT : 0);
      }

      @Override
      public void onEvents(int ready) {
        try {
          if ((ready & Epoll.OUT) != 0) {
            peer.forward();
          }
          if (!done && (ready & (Epoll.IN | Epoll.HUP | Epoll.ERR | Epoll.RDHUP)) != 0 && end < BUFFER_BYTES) {
            long n = socket.receive(inbound, end, BUFFER_BYTES - end, null);
            if (n == 0) {
              Pair.this.close((this == client ? "producer" : "host") + " closed the connection");
              return;
            }
            if (n > 0) {
              end += (int) n;
              forward();
            } else if ((ready & (Epoll.HUP | Epoll.ERR)) != 0) {
              Pair.this.close("connection error");
            }
          }
        } catch (ErrnoException e) {
          Pair.this.close(e.getMessage());
        }
      }

      /** Sends what this side read to the peer; then updates both sides' interest. */
      void forward() throws ErrnoException {
        while (start < end) {
          long n = peer.socket.send(inbound, start, end - start, -1);
          if (n < 0) {
            break;
          }
          start += (int) n;
        }
        if (start == end) {
          start = 0;
          end = 0;
        }
        updateInterest();
        peer.updateInterest();
      }

      void updateInterest() throws ErrnoException {
        int wanted = interest();
        if (registered && wanted != events) {
          loop.modify(socket.fd(), wanted, token);
          events = wanted;
        }
      }

      void close() {
        if (registered) {
          loop.unregister(socket.fd(), token);
          registered = false;
        }
        socket.close();
      }
    }
  }

  /** Stops listening, closes every relayed connection and the loop. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    loop.execute(() -> {
      for (Pair p : Set.copyOf(pairs)) {
        p.close("relay closing");
      }
      loop.unregister(listener.fd(), listenerToken);
      listener.close();
    });
    loop.close();
  }
}
