package org.jperfetto.service.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jperfetto.ipc.DefaultSockets;
import org.jperfetto.ipc.HostStats;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.os.BoundListener;
import org.jperfetto.os.Downcalls;
import org.jperfetto.os.Errno;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.os.TcpSockets;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.service.ClearPeriod;
import org.jperfetto.service.ClockSource;
import org.jperfetto.service.TracingService;
import org.jperfetto.service.buffer.BufferMemory;

/**
 * jtraced in a process: a {@link TracingService}, ProducerPort on one or more producer sockets and
 * ConsumerPort on the consumer socket, all on one thread ({@link LoopTaskRunner}).
 * {@link #close()} stops serving and
 * removes the socket files it created.
 */
public final class ServiceHost implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ServiceHost.class.getName());

  /** Producers of any user may connect (as upstream's traced). */
  public static final int PRODUCER_SOCKET_MODE = 0666;
  /** Only the owner may start traces unless widened. */
  public static final int DEFAULT_CONSUMER_SOCKET_MODE = 0600;
  /** Read-only file system (not in os.Errno yet). */
  private static final int EROFS = 30;

  /**
   * @param producerSockets paths ("@name" for abstract) or TCP {@code host:port} addresses to serve
   *     ProducerPort on
   * @param consumerSocket the path to serve ConsumerPort on (AF_UNIX only: a TCP consumer port
   *     would let anyone who reaches it read traces)
   * @param consumerSocketMode chmod of the consumer socket file, e.g. 0600 or 0666
   * @param clocks the service's clocks
   * @param maxBufferBytes the bytes all sessions' trace buffers may take together
   *     ({@link #defaultMaxBufferBytes()} unless set)
   * @param relayEndpoints the producer sockets that also serve RelayPort (upstream's
   *     --enable-relay-endpoint / --enable-relay-endpoint-on); each must be one of producerSockets
   * @param defaultClearPeriodMs the incremental-state clear period of ring-buffer sessions that set
   *     none ({@link ClearPeriod#DEFAULT_MS} unless set; 0: none, as upstream's traced)
   */
  public record Options(List<String> producerSockets, String consumerSocket, int consumerSocketMode,
      ClockSource clocks, long maxBufferBytes, Set<String> relayEndpoints, int defaultClearPeriodMs) {
    public Options {
      producerSockets = List.copyOf(producerSockets);
      relayEndpoints = Set.copyOf(relayEndpoints);
      Objects.requireNonNull(consumerSocket, "consumerSocket");
      Objects.requireNonNull(clocks, "clocks");
      if (producerSockets.isEmpty()) {
        throw new IllegalArgumentException("no producer socket");
      }
      if (maxBufferBytes <= 0) {
        throw new IllegalArgumentException("buffer memory budget must be positive: " + maxBufferBytes);
      }
      if (defaultClearPeriodMs < 0) {
        throw new IllegalArgumentException("default clear period must be 0 (off) or positive: "
            + defaultClearPeriodMs);
      }
      if ((consumerSocketMode & ~0777) != 0) {
        throw new IllegalArgumentException("consumer socket mode out of range: 0"
            + Integer.toOctalString(consumerSocketMode));
      }
      if (TcpSockets.isTcp(consumerSocket)) {
        throw new IllegalArgumentException("the consumer socket must be a path, not the TCP address "
            + consumerSocket);
      }
      for (String relay : relayEndpoints) {
        if (!producerSockets.contains(relay)) {
          throw new IllegalArgumentException("relay endpoint " + relay + " is not one of the producer sockets "
              + producerSockets);
        }
      }
    }

    /** The default paths (environment, /run/perfetto, /tmp), 0600, clock_gettime clocks. */
    public static Options defaults() {
      return of(DefaultSockets.producer(), DefaultSockets.consumer());
    }

    /** producerSockets may be a comma-separated list. */
    public static Options of(String producerSockets, String consumerSocket) {
      return new Options(DefaultSockets.split(producerSockets), consumerSocket,
          DEFAULT_CONSUMER_SOCKET_MODE, new PosixClockSource(), defaultMaxBufferBytes(), Set.of(),
          ClearPeriod.DEFAULT_MS);
    }

    public Options withConsumerSocketMode(int mode) {
      return new Options(producerSockets, consumerSocket, mode, clocks, maxBufferBytes, relayEndpoints,
          defaultClearPeriodMs);
    }

    public Options withClocks(ClockSource clockSource) {
      return new Options(producerSockets, consumerSocket, consumerSocketMode, clockSource, maxBufferBytes,
          relayEndpoints, defaultClearPeriodMs);
    }

    public Options withMaxBufferBytes(long bytes) {
      return new Options(producerSockets, consumerSocket, consumerSocketMode, clocks, bytes, relayEndpoints,
          defaultClearPeriodMs);
    }

    /** RelayPort on these producer sockets too (an empty set: on none). */
    public Options withRelayEndpoints(Set<String> sockets) {
      return new Options(producerSockets, consumerSocket, consumerSocketMode, clocks, maxBufferBytes, sockets,
          defaultClearPeriodMs);
    }

    /** The clear period of ring-buffer sessions that set none (0: none); see {@link ClearPeriod}. */
    public Options withDefaultClearPeriodMs(int ms) {
      return new Options(producerSockets, consumerSocket, consumerSocketMode, clocks, maxBufferBytes,
          relayEndpoints, ms);
    }

    /** RelayPort on every producer socket (upstream's --enable-relay-endpoint). */
    public Options withRelayEndpointOnAll() {
      return withRelayEndpoints(Set.copyOf(producerSockets));
    }
  }

  private final LoopTaskRunner runner;
  private final TracingService service;
  private final List<IpcHost> producerHosts;
  private final List<ProducerPortService> producerPorts;
  private final IpcHost consumerHost;
  private final List<String> createdFiles;
  private boolean closed;
  private IdleHeapTrim heapTrim;

  private ServiceHost(LoopTaskRunner runner, TracingService service, List<IpcHost> producerHosts,
      List<ProducerPortService> producerPorts, IpcHost consumerHost, List<String> createdFiles) {
    this.runner = runner;
    this.service = service;
    this.producerHosts = producerHosts;
    this.producerPorts = producerPorts;
    this.consumerHost = consumerHost;
    this.createdFiles = createdFiles;
  }

  /**
   * Starts the service and listens on every socket of options.
   *
   * @throws IOException naming the socket: another service listens there, the directory is not
   *     writable, the path is too long, ...; nothing is left listening then
   */
  public static ServiceHost start(Options options) throws IOException {
    return bind(options).serve();
  }

  /**
   * The first half of {@link #start}: every socket bound and listening (producer sockets, then the
   * consumer socket), with java.nio where it can, so that no downcall has been linked yet. Clients
   * that connect now wait in the listen backlog until {@link Bound#serve()}.
   */
  static Bound bind(Options options) throws IOException {
    List<String> files = new ArrayList<>();
    List<BoundListener> listeners = new ArrayList<>();
    try {
      for (String path : options.producerSockets()) {
        listeners.add(listen(path, PRODUCER_SOCKET_MODE, files));
      }
      listeners.add(listen(options.consumerSocket(), options.consumerSocketMode(), files));
    } catch (IOException | RuntimeException e) {
      listeners.forEach(BoundListener::close);
      files.forEach(ServiceHost::deleteQuietly);
      throw e;
    }
    return new Bound(options, listeners, files);
  }

  /** Sockets listening, nothing served yet: {@link #serve()} or {@link #close()} it. */
  static final class Bound implements AutoCloseable {
    private final Options options;
    private final List<BoundListener> listeners;
    private final List<String> files;

    private Bound(Options options, List<BoundListener> listeners, List<String> files) {
      this.options = options;
      this.listeners = listeners;
      this.files = files;
    }

    /**
     * Starts the service, its ports and their event loops on the bound sockets. Linking the
     * downcalls and building the ports (protobuf descriptors) are the two big costs left at this
     * point and do not depend on each other: a helper thread links while this one builds.
     */
    ServiceHost serve() throws IOException {
      Thread.ofPlatform().name("jtraced-link").daemon().start(Bound::linkQuietly);
      LoopTaskRunner runner = null;
      List<IpcHost> hosts = new ArrayList<>();
      UnixSocket unhosted = null;
      try {
        runner = new LoopTaskRunner("jtraced");
        TracingService service = new TracingService(runner, MemfdSharedMemory.factory(),
            options.clocks(), TracingService.currentUid());
        service.useBufferMemory(LAZY_BUFFER_MEMORY);
        service.limitBufferMemory(options.maxBufferBytes());
        service.defaultClearPeriod(options.defaultClearPeriodMs());
        List<ProducerPortService> ports = new ArrayList<>();
        for (int i = 0; i < listeners.size() - 1; i++) {
          ports.add(new ProducerPortService(service));
        }
        ConsumerPortService consumerPort = new ConsumerPortService(service);
        for (int i = 0; i < listeners.size(); i++) {
          unhosted = listeners.get(i).toUnixSocket();
          boolean producer = i < ports.size();
          List<ServiceDefinition> definitions = producer
              ? producerServices(ports.get(i), options.producerSockets().get(i), service)
              : List.of(consumerPort.definition());
          IpcHost host = IpcHost.start(unhosted, definitions, runner.loop());
          unhosted = null;
          hosts.add(host);
          if (producer) {
            host.setSendTimeoutMs(IpcHost.PRODUCER_SEND_TIMEOUT_MS); // as upstream's traced
            ports.get(i).attach(host);
          }
        }
        IpcHost consumerHost = hosts.removeLast();
        return new ServiceHost(runner, service, hosts, ports, consumerHost, files);
      } catch (IOException | RuntimeException e) {
        hosts.forEach(IpcHost::close);
        if (unhosted != null) {
          unhosted.close();
        }
        close();
        if (runner != null) {
          runner.close();
        }
        throw e;
      }
    }

    /** ProducerPort, and RelayPort where options ask for it. */
    private List<ServiceDefinition> producerServices(ProducerPortService port, String socket,
        TracingService service) {
      if (!options.relayEndpoints().contains(socket)) {
        return List.of(port.definition());
      }
      LOG.log(Level.INFO, "RelayPort exposed on " + socket);
      return List.of(port.definition(), new RelayPortService(service, options.clocks()).definition());
    }

    private static void linkQuietly() {
      try {
        Downcalls.linkAll();
      } catch (RuntimeException | LinkageError e) {
        // the call that needs the function links it again and reports the failure there
      }
    }

    /** Stops listening and removes the socket files (when not served). */
    @Override
    public void close() {
      listeners.forEach(BoundListener::close);
      files.forEach(ServiceHost::deleteQuietly);
    }
  }

  /**
   * A listening socket at path: a stale socket file (nobody accepting) is replaced, a live one is
   * refused, and the new file gets mode.
   */
  static BoundListener listen(String path, int mode, List<String> createdFiles) throws IOException {
    if (TcpSockets.isTcp(path)) {
      return listenTcp(path);
    }
    boolean isFile = !path.startsWith("@");
    if (isFile) {
      Path p = Path.of(path);
      Path dir = p.toAbsolutePath().getParent();
      if (dir != null && !Files.isDirectory(dir)) {
        throw new IOException("cannot create socket " + path + ": directory " + dir + " does not exist");
      }
      try {
        if (UnixSocket.unlinkStale(path)) {
          LOG.log(Level.INFO, "removed stale socket " + path);
        }
      } catch (IOException e) {
        throw new IOException("cannot check the existing socket " + path + ": " + e.getMessage(), e);
      }
    }
    BoundListener listener;
    try {
      listener = BoundListener.listen(path, 128);
    } catch (ErrnoException e) {
      throw switch (e.errno()) {
        case Errno.EADDRINUSE -> new IOException("another tracing service is listening on " + path, e);
        case Errno.EACCES, EROFS, Errno.EPERM -> new IOException("cannot create socket " + path
            + ": the directory is not writable (" + e.errnoName() + ")", e);
        default -> new IOException("cannot listen on " + path + ": " + e.getMessage(), e);
      };
    }
    if (isFile) {
      createdFiles.add(path);
      try {
        // java.nio's chmod: no downcall before the sockets exist
        Files.setPosixFilePermissions(Path.of(path), permissions(mode));
      } catch (IOException e) {
        listener.close();
        throw new IOException("cannot set mode 0" + Integer.toOctalString(mode) + " on " + path
            + ": " + e.getMessage(), e);
      }
    }
    return listener;
  }

  /**
   * A TCP producer endpoint: opt-in (named in the producer socket list) and announced loudly, since
   * anyone who can reach the port can connect as a producer, with no kernel-checked identity.
   */
  private static BoundListener listenTcp(String address) throws IOException {
    BoundListener listener;
    try {
      listener = BoundListener.listen(address, 128);
    } catch (ErrnoException e) {
      throw switch (e.errno()) {
        case Errno.EADDRINUSE -> new IOException("TCP endpoint " + address + " is in use", e);
        default -> new IOException("cannot listen on TCP endpoint " + address + ": " + e.getMessage(), e);
      };
    }
    LOG.log(Level.WARNING, "TCP producer endpoint " + address + " is open: any host that can reach it "
        + "can connect producers (uid and pid as the peer claims them; no shared memory)");
    return listener;
  }

  /**
   * Trace buffer memory committed as data arrives (anonymous MAP_NORESERVE), a little ahead of
   * the writes in one madvise per step ({@link SharedMapping#populate}) where the kernel can.
   */
  static final BufferMemory LAZY_BUFFER_MEMORY = new BufferMemory() {
    @Override
    public MemorySegment allocate(long size, Arena arena) {
      return lazyBufferMemory(size, arena);
    }

    @Override
    public boolean populate(MemorySegment buffer, long offset, long length) {
      try {
        SharedMapping.populate(buffer, offset, length);
        return true;
      } catch (ErrnoException e) {
        LOG.log(Level.DEBUG, () -> "trace buffer memory committed by page faults: " + e.getMessage());
        return false;
      }
    }
  };

  /**
   * jtraced's default budget for all trace buffers together: half the machine's memory (MemTotal in
   * /proc/meminfo), or 4 GiB when that cannot be read. Buffers are committed as they fill, so this
   * bounds what sessions may grow to; half leaves the traced processes room to run.
   */
  public static long defaultMaxBufferBytes() {
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          long kb = Long.parseLong(line.substring(9).trim().split("\\s+")[0]);
          return kb * 1024 / 2;
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // fall through to the fixed default
    }
    return 4L << 30;
  }

  /** Trace buffer memory committed page by page as data arrives (anonymous MAP_NORESERVE). */
  static MemorySegment lazyBufferMemory(long size, Arena arena) {
    try {
      return SharedMapping.mapAnonymous(size, arena);
    } catch (ErrnoException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** The rwx bits of a chmod mode (0777 at most). */
  static Set<PosixFilePermission> permissions(int mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] all = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
    for (int i = 0; i < all.length; i++) {
      if ((mode & (0400 >> i)) != 0) {
        set.add(all[i]);
      }
    }
    return set;
  }

  public TracingService service() {
    return service;
  }

  /** The first producer socket's host counters. */
  HostStats producerHostStats() {
    return producerHosts.getFirst().stats();
  }

  /** The consumer socket's host counters. */
  HostStats consumerHostStats() {
    return consumerHost.stats();
  }

  /** The consumer socket's send timeout (tests: shorter than the default 10 s). */
  void consumerSendTimeoutMs(long ms) {
    consumerHost.setSendTimeoutMs(ms);
  }

  /** Reads per connection per readiness event on every socket of this host (see IpcHost). */
  void readsPerEvent(int reads) {
    for (IpcHost h : producerHosts) {
      h.readsPerEvent(reads);
    }
    consumerHost.readsPerEvent(reads);
  }

  /** The runner of the service's thread (the IPC loop's). */
  LoopTaskRunner runner() {
    return runner;
  }

  /** The producer socket addresses, in the order given. */
  public List<String> producerSockets() {
    return producerHosts.stream().map(IpcHost::address).toList();
  }

  public String consumerSocket() {
    return consumerHost.address();
  }

  /**
   * From now on, whenever no session is left, gives back the heap that reading sessions out grew
   * ({@link IdleHeapTrim}: looks every {@value IdleHeapTrim#PERIOD_MS} ms). For long-lived services
   * (jtraced).
   */
  public void giveBackHeapWhenIdle() {
    Runtime rt = Runtime.getRuntime();
    giveBackHeapWhenIdle(IdleHeapTrim.PERIOD_MS, rt::totalMemory, System::gc);
  }

  /** {@link #giveBackHeapWhenIdle()} with its period, heap size and collection given. */
  synchronized IdleHeapTrim giveBackHeapWhenIdle(long periodMs, LongSupplier heapBytes, Runnable collect) {
    if (heapTrim == null && !closed) {
      heapTrim = new IdleHeapTrim(runner, periodMs, service::sessionCount, heapBytes, collect);
      heapTrim.start();
    }
    return heapTrim;
  }

  /**
   * After {@link #giveBackHeapWhenIdle()}: looks once now rather than at the next period, e.g. when
   * work of this process other than the service's (jtraced's JIT warm-up) has just grown the heap.
   */
  public synchronized void giveBackHeapSoon() {
    if (heapTrim != null && !closed) {
      heapTrim.checkSoon();
    }
  }

  /** Producers connected over all producer sockets (InitializeConnection done). */
  public int connectedProducers() {
    return producerPorts.stream().mapToInt(ProducerPortService::connectedProducers).sum();
  }

  /** Stops listening, drops every client, stops the service thread and removes the socket files. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (heapTrim != null) {
      heapTrim.stop();
    }
    consumerHost.close();
    producerHosts.forEach(IpcHost::close);
    runner.close();
    createdFiles.forEach(ServiceHost::deleteQuietly);
  }

  private static void deleteQuietly(String path) {
    try {
      Files.deleteIfExists(Path.of(path));
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot remove socket " + path + ": " + e.getMessage());
    }
  }
}
