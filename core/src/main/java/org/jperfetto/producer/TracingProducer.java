package org.jperfetto.producer;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.BuildVersion;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.ipc.MountedLock;
import org.jperfetto.ipc.Reply;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.ipc.wire.CommitDataEncoder;
import org.jperfetto.os.Fds;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.GetAsyncCommandRequest;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.NotifyDataSourceStartedRequest;
import org.jperfetto.protos.NotifyDataSourceStoppedRequest;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.RegisterTraceWriterRequest;
import org.jperfetto.protos.SyncRequest;
import org.jperfetto.protos.UnregisterDataSourceRequest;
import org.jperfetto.protos.UnregisterTraceWriterRequest;
import org.jperfetto.protos.UpdateDataSourceRequest;

/**
 * A producer connected to a Perfetto tracing service (jtraced or upstream traced) over its producer
 * socket: it binds ProducerPort, sends InitializeConnection with the SMB hints, registers the data
 * sources, serves the GetAsyncCommand stream (setup_tracing maps the service's shared memory;
 * setup, start, stop, flush and clear_incremental_state reach the {@link DataSource}s), and sends
 * CommitData for what the {@link TraceWriter}s complete.
 *
 * <p>When the service goes away, active instances are stopped, writers stop waiting for chunks,
 * and the producer reconnects with exponential backoff (100 ms doubling up to 30 s, as upstream),
 * registering its data sources again. Methods a service may lack (Sync, UpdateDataSource on older
 * ones) are looked up by name and fail cleanly with an {@code IpcException} of kind
 * METHOD_NOT_FOUND.
 *
 * <p>All protocol work runs on one producer thread; tracing threads never wait for it except under
 * {@link BufferExhaustedPolicy#STALL}.
 */
public final class TracingProducer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(TracingProducer.class.getName());

  /** Sent as InitializeConnectionRequest.sdk_version. */
  public static final String SDK_VERSION = BuildVersion.NAME;
  static final String PORT = "ProducerPort";
  /** The longest {@link Builder#dropGrace}: past it, STALL_THEN_DROP says what is meant. */
  public static final Duration MAX_DROP_GRACE = Duration.ofSeconds(1);

  private final String name;
  private final String socketPath;
  private final long initialBackoffMs;
  private final long maxBackoffMs;
  private final SmbNegotiation smb;
  private final ScheduledExecutorService executor;
  private final List<DataSource<?>> dataSources = new CopyOnWriteArrayList<>();

  // producer thread only
  private volatile Connection connection;
  private long backoffMs;

  private volatile boolean closed;
  private volatile CompletableFuture<Void> connected = new CompletableFuture<>();
  private volatile int connections;
  private volatile boolean usingProvidedSmb;
  // Producer thread only: "no service answers" was logged since the last connection.
  private boolean unansweredLogged;

  /** Startup tracing's instances and SMB, if asked for (set on the producer thread). */
  private volatile StartupTracing startup;

  private TracingProducer(Builder b) {
    this.name = b.name;
    this.socketPath = b.socketPath != null ? b.socketPath : ProducerSockets.defaultPath();
    this.smb = new SmbNegotiation(name, b.smbSizeHint, b.smbPageSizeHint, b.provideSmb,
        b.providedSmbSize, b.providedSmbSeals, b.dropGrace.toNanos());
    this.initialBackoffMs = b.initialBackoff.toMillis();
    this.maxBackoffMs = b.maxBackoff.toMillis();
    this.backoffMs = initialBackoffMs;
    this.dataSources.addAll(b.dataSources);
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "jperfetto-producer " + name);
      t.setDaemon(true);
      return t;
    });
  }

  /** A builder for a producer that introduces itself to the service as producerName. */
  public static Builder builder(String producerName) {
    return new Builder(producerName);
  }

  /** Options of a {@link TracingProducer}. */
  public static final class Builder {
    private final String name;
    private String socketPath;
    private int smbSizeHint;
    private int smbPageSizeHint;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(30);
    private boolean provideSmb;
    private long providedSmbSize;
    private int providedSmbSeals = ProvidedSmb.REQUIRED_SEALS;
    private org.jperfetto.protos.TraceConfig startupConfig;
    private Duration startupTimeout;
    private Duration dropGrace = Duration.ofNanos(SharedMemoryArbiter.DEFAULT_DROP_GRACE_NANOS);
    private final List<DataSource<?>> dataSources = new java.util.ArrayList<>();

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "producer name");
    }

    /** The producer socket; default {@link ProducerSockets#defaultPath()}. */
    public Builder socketPath(String path) {
      this.socketPath = path;
      return this;
    }

    /** shared_memory_size_hint_bytes (0: the service's default, 256 KiB). */
    public Builder smbSizeHint(int bytes) {
      this.smbSizeHint = bytes;
      return this;
    }

    /** The SMB size hint set so far (0: none). */
    public int smbSizeHint() {
      return smbSizeHint;
    }

    /** shared_memory_page_size_hint_bytes (0: the service's default, 4 KiB). */
    public Builder smbPageSizeHint(int bytes) {
      this.smbPageSizeHint = bytes;
      return this;
    }

    /**
     * Offer the service our own shared memory buffer with each InitializeConnection (upstream's
     * producer-provided SMB): a sealed memfd of the hinted sizes (invalid hints: 256 KiB of 4 KiB
     * pages), sent with the sizes as the hints. If the service does not adopt it, the producer uses
     * the one the service sends, as without this option.
     */
    public Builder producerProvidedSmb(boolean provide) {
      this.provideSmb = provide;
      return this;
    }

    /**
     * Startup tracing (upstream's {@code SetupStartupTracingBlocking}): {@link #start()} starts, before
     * connecting, an instance of each of this producer's data sources that config lists, writing
     * into the producer's own SMB (implies {@link #producerProvidedSmb}). When a session of the
     * service then starts a data source with the same config (the fields the service fills in
     * aside), the startup instance becomes that session's: what it wrote so far goes into the
     * session's buffer. Instances no session adopted within timeout are stopped and their data
     * dropped. Use a data source with {@link BufferExhaustedPolicy#DROP} or STALL_THEN_DROP: until
     * adoption nothing frees the SMB.
     */
    public Builder startupTracing(org.jperfetto.protos.TraceConfig config, Duration timeout) {
      this.startupConfig = Objects.requireNonNull(config, "startup config");
      this.startupTimeout = Objects.requireNonNull(timeout, "startup timeout");
      this.provideSmb = true;
      return this;
    }

    /** Tests only: offer an SMB of exactly size bytes (0: from the hints) with these seals. */
    Builder providedSmbShape(long size, int seals) {
      this.providedSmbSize = size;
      this.providedSmbSeals = seals;
      return this;
    }

    /**
     * How long a writer of a data source with {@link BufferExhaustedPolicy#DROP} waits for the
     * service to free a chunk, when it finds the SMB full, before it starts dropping (default 1 ms;
     * at most 1 s). A burst that outruns the service for a moment then loses nothing, and a thread
     * waits at most this long each time its writer runs out: once dropping it does not wait again
     * until it has a chunk. {@link Duration#ZERO} drops at once, as upstream's SDK does.
     */
    public Builder dropGrace(Duration grace) {
      Objects.requireNonNull(grace, "drop grace");
      if (grace.isNegative() || grace.compareTo(MAX_DROP_GRACE) > 0) {
        throw new IllegalArgumentException("drop grace must be within 0 and " + MAX_DROP_GRACE + ": " + grace);
      }
      this.dropGrace = grace;
      return this;
    }

    /** Reconnect delays: initial, doubled after each failure up to max. */
    public Builder reconnectBackoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /**
     * Registers dataSource with the service on every connection. Several data sources may share a
     * name (two libraries' TrackEvents): each gets its own instance in every session that asks for
     * the name.
     *
     * @throws IllegalArgumentException if dataSource was given already: a second registration of
     *     the same object could never record anything of its own
     */
    public Builder dataSource(DataSource<?> dataSource) {
      requireNew(dataSources, dataSource, name);
      dataSources.add(dataSource);
      return this;
    }

    /** Builds the producer and starts connecting (in the background). */
    public TracingProducer start() {
      TracingProducer p = new TracingProducer(this);
      if (startupConfig != null) {
        // Before returning: the app's first trace points are recorded.
        CompletableFuture<Void> ready = new CompletableFuture<>();
        p.executor.execute(() -> {
          try {
            p.setUpStartupTracing(startupConfig);
          } finally {
            ready.complete(null);
          }
        });
        ready.join();
        p.executor.schedule(() -> p.abortStartupTracing("not adopted within " + startupTimeout.toMillis() + " ms"),
            startupTimeout.toMillis(), TimeUnit.MILLISECONDS);
      }
      p.executor.execute(p::connectNow);
      return p;
    }
  }

  /** The producer name the service knows this producer by. */
  public String name() {
    return name;
  }

  /** The producer socket this producer connects to (a path, or host:port for TCP). */
  public String socketPath() {
    return socketPath;
  }

  /** Whether the producer is connected and initialized. */
  public boolean isConnected() {
    return connected.isDone() && !closed;
  }

  /** Waits until connected and initialized; false on timeout. */
  public boolean awaitConnected(Duration timeout) throws InterruptedException {
    try {
      connected.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return false;
    }
  }

  /** The drop grace of the current connection's SMB, in nanoseconds; -1 without one (tests). */
  long dropGraceNanosForTesting() {
    Connection c = connection;
    SharedMemoryArbiter a = c == null ? null : c.arbiter;
    return a == null ? -1 : a.dropGraceNanos();
  }

  /**
   * Whether the service adopted the SMB this producer offered on the current connection
   * (InitializeConnectionResponse.using_shmem_provided_by_producer); false when not connected.
   */
  public boolean usingProducerProvidedSmb() {
    return usingProvidedSmb && isConnected();
  }

  /**
   * Bytes of the shared memory buffer this producer writes into on the current connection (as the
   * service sized it from {@link Builder#smbSizeHint}); 0 when it has none.
   */
  public long smbSizeBytes() {
    Connection c = connection;
    SharedMemoryArbiter a = c == null ? null : c.arbiter;
    return a == null ? 0 : a.abi().segment().byteSize();
  }

  /** Startup tracing instances still waiting for a session to adopt them. */
  public int startupTracingPending() {
    StartupTracing st = startup;
    return st == null ? 0 : st.pending();
  }

  /** Connections initialized so far (1 after the first, 2 after a reconnect, ...). */
  public int connectionCount() {
    return connections;
  }

  /**
   * Adds a data source; registered with the service now if connected, else on connecting. It may
   * share its name with data sources registered before (each records, see {@link
   * Builder#dataSource}).
   *
   * @throws IllegalArgumentException if dataSource is registered on this producer already
   */
  public void register(DataSource<?> dataSource) {
    synchronized (dataSources) {
      requireNew(dataSources, dataSource, name);
      dataSources.add(dataSource);
    }
    run(() -> {
      Connection c = connection;
      if (c != null && c.initialized) {
        c.registerDataSource(dataSource.descriptor());
      }
    });
  }

  /** The same data source object twice on one producer: refused, it would never record as the second. */
  private static void requireNew(List<DataSource<?>> registered, DataSource<?> dataSource, String producer) {
    Objects.requireNonNull(dataSource, "data source");
    for (DataSource<?> ds : registered) {
      if (ds == dataSource) {
        throw new IllegalArgumentException("data source \"" + dataSource.name()
            + "\" is registered on producer " + producer + " already (" + dataSource
            + "); another data source of the same name is fine, the same one twice is not");
      }
    }
  }

  /**
   * Removes a data source: UnregisterDataSource is sent if connected, its active instances stop
   * being traced (the service stops them), and it is not registered again on reconnecting.
   *
   * <p>A service unregisters by name: it removes one registration and stops every instance of the
   * name on this producer. So when other data sources of this producer share the name, all of the
   * name's registrations are withdrawn and the others registered again: the sessions running
   * then set up fresh instances of them.
   */
  public void unregister(DataSource<?> dataSource) {
    List<DataSource<?>> namesakes;
    synchronized (dataSources) {
      if (!dataSources.remove(dataSource)) {
        return;
      }
      namesakes = dataSources.stream().filter(ds -> ds.name().equals(dataSource.name())).toList();
    }
    run(() -> {
      Connection c = connection;
      if (c != null && c.initialized) {
        for (int i = 0; i <= namesakes.size(); i++) {
          c.invokeNoReply("UnregisterDataSource",
              UnregisterDataSourceRequest.newBuilder().setDataSourceName(dataSource.name()).build());
        }
        for (DataSource<?> ds : namesakes) {
          c.registerDataSource(ds.descriptor());
        }
      }
    });
  }

  /** UpdateDataSource; fails with METHOD_NOT_FOUND on a service that lacks it. */
  public CompletableFuture<Void> updateDataSource(DataSourceDescriptor descriptor) {
    return call("UpdateDataSource",
        UpdateDataSourceRequest.newBuilder().setDataSourceDescriptor(descriptor).build());
  }

  /**
   * Sync: completes when the service has processed everything sent before, and this producer the
   * commands the service sent before its answer; METHOD_NOT_FOUND if absent.
   */
  public CompletableFuture<Void> sync() {
    return call("Sync", SyncRequest.getDefaultInstance());
  }

  private CompletableFuture<Void> call(String method, MessageLite request) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    run(() -> {
      Connection c = connection;
      if (c == null || !c.initialized) {
        result.completeExceptionally(new IllegalStateException("not connected to " + socketPath));
        return;
      }
      c.port.invoke(method, request).whenComplete((reply, err) -> completeOnProducerThread(result, err));
    });
    return result;
  }

  /**
   * Completes f on the producer thread, behind the commands that arrived before the answer: after a
   * {@link #sync()} the producer has acted on everything the service sent before it answered (an
   * in-process session's start waits on this).
   */
  private void completeOnProducerThread(CompletableFuture<Void> f, Throwable err) {
    Runnable complete = () -> {
      if (err != null) {
        f.completeExceptionally(err);
      } else {
        f.complete(null);
      }
    };
    try {
      executor.execute(complete);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      complete.run(); // closing: nothing is left to wait for
    }
  }

  private void run(Runnable task) {
    if (closed) {
      return;
    }
    try {
      executor.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "producer " + name + ": task failed", e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  // ---- connection lifecycle (producer thread) ----

  private void connectNow() {
    if (closed) {
      return;
    }
    Connection c = new Connection();
    IpcClient client;
    try {
      client = IpcClient.connect(socketPath, cause -> run(() -> onDisconnected(c, cause.getMessage())));
    } catch (IOException e) {
      if (!unansweredLogged) {
        // Once per outage, not per retry: a producer may wait for a service for the app's lifetime.
        unansweredLogged = true;
        LOG.log(Level.INFO, "producer " + name + ": no tracing service answers on " + socketPath + " ("
            + e.getMessage() + "); retrying in the background until one does");
      }
      LOG.log(Level.DEBUG, () -> "producer " + name + ": cannot connect to " + socketPath + ": "
          + e.getMessage());
      scheduleReconnect();
      return;
    }
    c.client = client;
    connection = c;
    client.bind(PORT).whenComplete((port, err) -> run(() -> onBound(c, port, err)));
  }

  private void onBound(Connection c, BoundService port, Throwable err) {
    if (c.lost) {
      return;
    }
    if (err != null) {
      LOG.log(Level.WARNING, "producer " + name + ": binding " + PORT + " failed: " + err.getMessage());
      onDisconnected(c, "bind failed");
      return;
    }
    c.port = port;
    // As upstream's SDK: SMB scraping asked for (so the service can read chunks our idle writers
    // still hold), and GetAsyncCommand pipelined right behind InitializeConnection.
    InitializeConnectionRequest.Builder init = InitializeConnectionRequest.newBuilder()
        .setProducerName(name)
        .setSmbScrapingMode(InitializeConnectionRequest.ProducerSMBScrapingMode.SMB_SCRAPING_ENABLED);
    // Over TCP no descriptor can travel: nothing to offer, chunks will go inside CommitData.
    c.emulated = c.client.isTcp();
    // The first connection offers what startup tracing writes into.
    ProvidedSmb startupSmb = startup != null && !c.emulated ? startup.takeSmb() : null;
    c.providedSmb = c.emulated ? smb.offerNothing(init) : smb.offer(init, startupSmb);
    if (startupSmb != null && c.providedSmb == startupSmb) {
      c.startup = startup;
    }
    init.setSdkVersion(SDK_VERSION);
    port.invoke("InitializeConnection", init.build().toByteString(),
        c.providedSmb != null ? c.providedSmb.fd() : -1)
        .whenComplete((reply, e) -> run(() -> onInitialized(c, reply, e)));
    port.invokeStreaming("GetAsyncCommand", GetAsyncCommandRequest.getDefaultInstance().toByteString(), -1,
        reply -> onAsyncCommandReply(c, reply));
  }

  private void onInitialized(Connection c, Reply reply, Throwable err) {
    if (c.lost) {
      return;
    }
    if (err != null) {
      LOG.log(Level.WARNING, "producer " + name + ": InitializeConnection failed: " + err.getMessage());
      onDisconnected(c, "InitializeConnection failed");
      return;
    }
    if (c.providedSmb != null) {
      if (smb.adopted(reply)) {
        useProvidedSmb(c);
      } else {
        // Unlike upstream's SDK (which reconnects without it), keep this connection: the service
        // sends its own SMB with setup_tracing, as for a producer that offered none.
        LOG.log(Level.INFO, "producer " + name + ": the service did not adopt our SMB; using the one it sends");
        c.providedSmb = null;
        if (c.startup != null) {
          abortStartupTracing("the service did not adopt the SMB");
          c.startup = null;
        }
      }
    }
    c.emulated |= smb.emulationAsked(reply);
    usingProvidedSmb = c.arbiter != null && c.usingProvidedSmb;
    c.initialized = true;
    for (DataSource<?> ds : dataSources) {
      c.registerDataSource(ds.descriptor());
    }
    backoffMs = initialBackoffMs;
    unansweredLogged = false;
    connections++;
    connected.complete(null);
    LOG.log(Level.DEBUG, () -> "producer " + name + " connected to " + socketPath);
  }

  /** On the IPC thread: parse, then hop to the producer thread with the fd. */
  private void onAsyncCommandReply(Connection c, Reply reply) {
    GetAsyncCommandResponse cmd;
    try {
      cmd = GetAsyncCommandResponse.parseFrom(reply.bytes());
    } catch (InvalidProtocolBufferException e) {
      LOG.log(Level.WARNING, "producer " + name + ": malformed GetAsyncCommandResponse: " + e.getMessage());
      Fds.closeQuietly(reply.fd());
      return;
    }
    int fd = reply.fd();
    if (closed) {
      Fds.closeQuietly(fd);
      return;
    }
    try {
      executor.execute(() -> {
        try {
          onCommand(c, cmd, fd);
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "producer " + name + ": handling " + cmd.getCmdCase() + " failed", e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      Fds.closeQuietly(fd);
    }
  }

  private void onCommand(Connection c, GetAsyncCommandResponse cmd, int fd) {
    if (c.lost) {
      Fds.closeQuietly(fd);
      return;
    }
    switch (cmd.getCmdCase()) {
      case SETUP_TRACING -> {
        setUpTracing(c, cmd.getSetupTracing().getSharedBufferPageSizeKb(), fd);
        return;
      }
      case SETUP_DATA_SOURCE -> setUpInstance(c, cmd.getSetupDataSource().getNewInstanceId(),
          cmd.getSetupDataSource().getConfig());
      case START_DATA_SOURCE -> startInstance(c, cmd.getStartDataSource().getNewInstanceId(),
          cmd.getStartDataSource().getConfig());
      case STOP_DATA_SOURCE -> stopInstance(c, cmd.getStopDataSource().getInstanceId());
      case FLUSH -> flush(c, cmd.getFlush());
      case CLEAR_INCREMENTAL_STATE -> {
        for (long id : cmd.getClearIncrementalState().getDataSourceIdsList()) {
          ActiveInstance<?> a = c.instances.get(id);
          if (a != null) {
            a.clearIncrementalState();
          }
        }
      }
      default -> LOG.log(Level.DEBUG, () -> "producer " + name + ": ignoring command " + cmd.getCmdCase());
    }
    Fds.closeQuietly(fd);
  }

  /** Writers go into our own SMB, which the service adopted. */
  private void useProvidedSmb(Connection c) {
    if (c.arbiter == null) {
      ProvidedSmb own = c.providedSmb;
      if (c.startup != null) {
        c.arbiter = c.startup.arbiter();
        c.startup.connect(c);
        run(c.drainTask); // what startup writers committed before (held until adopted)
      } else {
        c.arbiter = smb.arbiter(own.segment(), own.pageSize(), c);
      }
      c.usingProvidedSmb = true;
      LOG.log(Level.DEBUG, () -> "producer " + name + ": the service adopted our SMB, size="
          + own.segment().byteSize() + " page=" + own.pageSize());
    }
  }

  /** setup_tracing: our own SMB if the service adopted it, else the one it sent (fd). */
  private void setUpTracing(Connection c, int pageSizeKb, int fd) {
    if (fd < 0 && c.providedSmb != null) {
      // Without an fd: the service adopted ours (this may come before the InitializeConnection answer).
      useProvidedSmb(c);
      return;
    }
    if (c.arbiter != null) {
      LOG.log(Level.WARNING, "producer " + name + ": setup_tracing again; keeping the first SMB");
      Fds.closeQuietly(fd);
      return;
    }
    c.arbiter = fd < 0 && c.emulated ? smb.emulatedSmb(pageSizeKb, c) : smb.mapServiceSmb(pageSizeKb, fd, c);
  }

  /** This producer's data sources of that name, in registration order. */
  private List<DataSource<?>> dataSourcesNamed(String dsName) {
    return dataSources.stream().filter(ds -> ds.name().equals(dsName)).toList();
  }

  /**
   * The data source a session's setup_data_source is meant for. A service sends one setup per
   * registration of a name, each with its own instance id and all with the same config, and says
   * nothing about which registration it means; as upstream's SDK, each goes to the first data source
   * of the name (with a free slot) that holds no instance of this connection with an equal config.
   */
  private DataSource<?> dataSourceFor(Connection c, DataSourceConfig config) {
    DataSource<?> full = null;
    for (DataSource<?> ds : dataSourcesNamed(config.getName())) {
      if (servesConfig(c, ds, config)) {
        continue;
      }
      if (ds.freeSlot() >= 0) {
        return ds;
      }
      full = full == null ? ds : full;
    }
    return full;
  }

  private static boolean servesConfig(Connection c, DataSource<?> ds, DataSourceConfig config) {
    for (ActiveInstance<?> a : c.instances.values()) {
      if (a.dataSource == ds && a.serves(config)) {
        return true;
      }
    }
    return false;
  }

  private ActiveInstance<?> setUpInstance(Connection c, long id, DataSourceConfig config) {
    ActiveInstance<?> existing = c.instances.get(id);
    if (existing != null) {
      return existing;
    }
    ActiveInstance<?> early = c.startup != null ? c.startup.adopt(config) : null;
    if (early != null) {
      early.sessionConfig = config;
      c.instances.put(id, early);
      run(c.drainTask);
      LOG.log(Level.DEBUG, () -> "producer " + name + ": session instance " + id + " adopted startup instance of "
          + config.getName());
      return early;
    }
    DataSource<?> ds = dataSourceFor(c, config);
    if (ds == null) {
      LOG.log(Level.WARNING, "producer " + name + ": no data source named " + config.getName()
          + " left for instance " + id + " (" + dataSourcesNamed(config.getName()).size()
          + " registered, each serving this config already)");
      return null;
    }
    ActiveInstance<?> a = ActiveInstance.setUp(ds, id, config, c.arbiter);
    if (a != null) {
      a.sessionConfig = config;
      c.instances.put(id, a);
    } else {
      LOG.log(Level.WARNING, "producer " + name + ": data source " + ds.name() + " has "
          + DataSource.MAX_INSTANCES + " instances already; instance " + id + " ignored");
    }
    return a;
  }

  private void startInstance(Connection c, long id, DataSourceConfig config) {
    if (c.arbiter == null) {
      LOG.log(Level.ERROR, "producer " + name + ": start_data_source before setup_tracing: instance " + id);
      return;
    }
    ActiveInstance<?> a = setUpInstance(c, id, config);
    if (a == null) {
      return;
    }
    if (!a.startedEarly) {
      a.start(c.arbiter);
    }
    if (a.dataSource.descriptor().getWillNotifyOnStart()) {
      c.invokeNoReply("NotifyDataSourceStarted",
          NotifyDataSourceStartedRequest.newBuilder().setDataSourceId(id).build());
    }
  }

  private void stopInstance(Connection c, long id) {
    ActiveInstance<?> a = c.instances.get(id);
    if (a == null) {
      LOG.log(Level.DEBUG, () -> "producer " + name + ": stop for unknown instance " + id);
      return;
    }
    AtomicBoolean once = new AtomicBoolean();
    a.stop(() -> {
      if (once.compareAndSet(false, true)) {
        run(() -> finishStop(c, id, a));
      }
    });
  }

  private void finishStop(Connection c, long id, ActiveInstance<?> a) {
    a.release();
    c.instances.remove(id);
    if (c.lost) {
      return;
    }
    if (c.arbiter != null) {
      c.arbiter.requestDrain();
    }
    if (a.dataSource.descriptor().getWillNotifyOnStop()) {
      // After the drain task queued above, so the commits go first.
      run(() -> c.invokeNoReply("NotifyDataSourceStopped",
          NotifyDataSourceStoppedRequest.newBuilder().setDataSourceId(id).build()));
    }
  }

  /**
   * Data sources' onFlush, then every writer of the flushed instances' buffers commits its current
   * chunk (idle writers' chunks are completed here, see {@link WriterFlush}), then the ack rides
   * the CommitData behind those chunks.
   */
  private void flush(Connection c, GetAsyncCommandResponse.Flush flush) {
    // One count per instance plus one for this loop; the ack goes out (on this thread, after the
    // commits the instances queued) when the last of them is done.
    java.util.Set<Integer> buffers = new java.util.HashSet<>();
    AtomicInteger left = new AtomicInteger(1);
    Runnable oneDone = () -> {
      if (left.decrementAndGet() == 0) {
        run(() -> ackFlush(c, flush.getRequestId(), buffers));
      }
    };
    for (long id : flush.getDataSourceIdsList()) {
      ActiveInstance<?> a = c.instances.get(id);
      if (a != null) {
        left.incrementAndGet();
        buffers.add(a.instance.config().getTargetBuffer());
        AtomicBoolean once = new AtomicBoolean();
        a.flush(() -> {
          if (once.compareAndSet(false, true)) {
            oneDone.run();
          }
        });
      }
    }
    oneDone.run();
  }

  private void ackFlush(Connection c, long requestId, java.util.Set<Integer> buffers) {
    if (c.lost) {
      return;
    }
    if (c.arbiter != null) {
      awaitWriterFlush(c, c.arbiter.startWriterFlush(buffers::contains), requestId,
          System.nanoTime() + WRITER_FLUSH_WAIT_NANOS);
    } else {
      CommitBatch ack = new CommitBatch();
      ack.flushRequestId = requestId;
      c.invokeNoReply("CommitData", CommitRequests.toProto(ack));
    }
  }

  // ---- startup tracing (producer thread) ----

  private void setUpStartupTracing(org.jperfetto.protos.TraceConfig config) {
    ProvidedSmb own = smb.create();
    if (own != null) {
      startup = StartupTracing.start(name, config, this::dataSourcesNamed, own,
          sink -> smb.arbiter(own.segment(), own.pageSize(), sink));
    }
  }

  /** Stops the startup instances no session adopted; what they wrote goes nowhere. */
  private void abortStartupTracing(String why) {
    StartupTracing st = startup;
    if (st != null && st.abort(why)) {
      Connection c = connection;
      if (c != null && c.startup != null) {
        run(c.drainTask);
      }
    }
  }

  /**
   * How long a flush waits for writers caught in the middle of a packet (normally microseconds)
   * before it acks anyway and leaves their chunks to the service's scrape.
   */
  static final long WRITER_FLUSH_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private void awaitWriterFlush(Connection c, WriterFlush writers, long requestId, long deadline) {
    if (c.lost) {
      return;
    }
    boolean done = writers.poll();
    if (!done && System.nanoTime() - deadline < 0) {
      try {
        executor.schedule(() -> run(() -> awaitWriterFlush(c, writers, requestId, deadline)),
            1, TimeUnit.MILLISECONDS);
        return;
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return; // closing
      }
    }
    if (!done) {
      LOG.log(Level.DEBUG, () -> "producer " + name + ": flush " + requestId + ": " + writers.remaining()
          + " writer(s) still inside a packet; their chunks are left to the service's scrape");
    }
    c.arbiter.notifyFlushComplete(requestId);
  }

  private void onDisconnected(Connection c, String why) {
    if (c.lost) {
      return;
    }
    c.lost = true;
    LOG.log(Level.DEBUG, () -> "producer " + name + ": disconnected: " + why);
    if (c.arbiter != null) {
      c.arbiter.detach();
    }
    if (c.startup != null) {
      abortStartupTracing("disconnected before a session adopted it");
    }
    for (ActiveInstance<?> a : c.instances.values()) {
      a.stop(() -> { });
      a.release();
    }
    c.instances.clear();
    if (connection == c) {
      connection = null;
      if (connected.isDone()) {
        connected = new CompletableFuture<>();
      }
    }
    if (c.client != null) {
      c.client.close();
    }
    scheduleReconnect();
  }

  private void scheduleReconnect() {
    if (closed) {
      return;
    }
    long delay = backoffMs;
    backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
    try {
      executor.schedule(this::connectNow, delay, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  /** Disconnects and stops the producer thread; active instances are stopped. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    executor.execute(() -> {
      Connection c = connection;
      if (c != null) {
        onDisconnected(c, "producer closed");
      }
      abortStartupTracing("producer closed"); // never connected: still tracing into nowhere
      done.complete(null);
    });
    done.join();
    closed = true;
    executor.shutdownNow();
    try {
      executor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- one connection ----

  /** One connection to the service and its SMB; producer thread except where noted. */
  private final class Connection implements SharedMemoryArbiter.CommitSink {
    IpcClient client;
    volatile BoundService port;
    volatile SharedMemoryArbiter arbiter;
    /** The SMB offered with InitializeConnection, until the service refuses it. */
    ProvidedSmb providedSmb;
    /** Set when this connection took the startup tracing SMB (read by writer threads). */
    volatile StartupTracing startup;
    boolean usingProvidedSmb;
    /** No shared memory with the service (TCP, or a remote host): chunks travel inside CommitData. */
    volatile boolean emulated;
    boolean initialized;
    volatile boolean lost;
    final Map<Long, ActiveInstance<?>> instances = new HashMap<>();
    /** Guards a drain: taking the arbiter's batch, encoding it, queuing it on the socket. */
    private final MountedLock drainLock = new MountedLock();
    private CommitBatch spare = new CommitBatch(); // guarded by drainLock
    private final CommitDataEncoder commitEncoder = new CommitDataEncoder(); // guarded by drainLock
    final Runnable drainTask = this::drain;
    /** Tasks virtual threads hand to the producer thread, by way of a platform thread. */
    private final VirtualThreadHandOff handOff =
        new VirtualThreadHandOff("jperfetto-handoff-" + name, () -> lost || closed);
    /** For {@link #drain(long)}: whichever batch is pending. */
    private static final long ANY_BATCH = -1;

    void registerDataSource(DataSourceDescriptor descriptor) {
      port.invoke("RegisterDataSource",
          RegisterDataSourceRequest.newBuilder().setDataSourceDescriptor(descriptor).build())
          .whenComplete((reply, err) -> {
            if (err != null) {
              LOG.log(Level.WARNING, "producer " + name + ": RegisterDataSource " + descriptor.getName()
                  + " failed: " + err.getMessage());
            }
          });
    }

    void invokeNoReply(String method, MessageLite request) {
      if (lost || port == null) {
        return;
      }
      try {
        port.invokeNoReply(method, request.toByteString(), -1);
      } catch (IOException e) {
        LOG.log(Level.WARNING, "producer " + name + ": " + method + " failed: " + e.getMessage());
      }
    }

    /**
     * Any thread: a writer completed something. The calling thread sends the CommitData itself (a
     * non-blocking socket write of bytes encoded in place: no hand-over to the producer thread, no
     * wake-up, nothing allocated), except while startup tracing's chunks are being resolved, which
     * the producer thread does. The drain's and the socket's locks are MountedLocks, so a virtual
     * thread sending here spins rather than unmount with a shared writer held.
     */
    @Override
    public void commitPending() {
      if (lost) {
        return;
      }
      if (startup != null) {
        runFromWriter(drainTask);
      } else {
        drain();
      }
    }

    /**
     * A batch below its size waits on the producer thread for a few ms, then goes anyway, unless a
     * writer sent it meanwhile.
     */
    @Override
    public void commitSoon(long batch) {
      if (lost || closed) {
        return;
      }
      if (Thread.currentThread().isVirtual()) {
        handOff.post(() -> commitSoon(batch));
        return;
      }
      try {
        executor.schedule(() -> drain(batch), SharedMemoryArbiter.LATE_DRAIN_MS, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closing
      }
    }

    private void drain() {
      drain(ANY_BATCH);
    }

    /** Sends the pending batch; with a batch number, only if that batch is still the pending one. */
    private void drain(long onlyBatch) {
      drainLock.lock();
      try {
        SharedMemoryArbiter a = arbiter;
        if (a == null || lost) {
          return;
        }
        CommitBatch batch = onlyBatch == ANY_BATCH ? a.drainTo(spare) : a.drainLateTo(spare, onlyBatch);
        StartupTracing st = startup;
        if (st != null) {
          st.resolve(batch);
        }
        if (emulated) {
          for (CommitDataRequest req : CommitRequests.toProtoInline(batch, a.abi())) {
            invokeNoReply("CommitData", req);
          }
        } else if (!batch.isEmpty()) {
          sendCommitData(batch);
        }
        spare = batch;
      } finally {
        drainLock.unlock();
      }
    }

    private void sendCommitData(CommitBatch batch) {
      BoundService p = port;
      if (lost || p == null) {
        return;
      }
      int length = commitEncoder.encode(batch);
      try {
        p.invokeNoReply("CommitData", commitEncoder.buffer(), 0, length);
      } catch (IpcException e) {
        // A writer thread may race the producer thread noticing a lost connection: that one says so.
        LOG.log(e.kind() == IpcException.Kind.CONNECTION_LOST ? Level.DEBUG : Level.WARNING,
            () -> "producer " + name + ": CommitData failed: " + e.getMessage());
      }
    }

    @Override
    public void registerTraceWriter(int writerId, int targetBuffer) {
      runFromWriter(() -> invokeNoReply("RegisterTraceWriter", RegisterTraceWriterRequest.newBuilder()
          .setTraceWriterId(writerId).setTargetBuffer(targetBuffer).build()));
    }

    @Override
    public void unregisterTraceWriter(int writerId) {
      runFromWriter(() -> invokeNoReply("UnregisterTraceWriter",
          UnregisterTraceWriterRequest.newBuilder().setTraceWriterId(writerId).build()));
    }

    /** Runs task on the producer thread; from a virtual thread, by way of the hand-off thread. */
    private void runFromWriter(Runnable task) {
      if (Thread.currentThread().isVirtual()) {
        handOff.post(() -> run(task));
      } else {
        run(task);
      }
    }
  }
}
