package org.jperfetto.producer;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.Reply;
import org.jperfetto.os.Errno;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
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
  public static final String SDK_VERSION = "jperfetto 0.1";
  static final String PORT = "ProducerPort";
  /** Largest SMB accepted from the service (upstream's kMaxShmSize). */
  static final long MAX_SMB_SIZE = 32L * 1024 * 1024;

  private final String name;
  private final String socketPath;
  private final int smbSizeHint;
  private final int smbPageSizeHint;
  private final long initialBackoffMs;
  private final long maxBackoffMs;
  private final ScheduledExecutorService executor;
  private final List<DataSource<?>> dataSources = new CopyOnWriteArrayList<>();

  // producer thread only
  private Connection connection;
  private long backoffMs;
  private boolean started;

  private volatile boolean closed;
  private volatile CompletableFuture<Void> connected = new CompletableFuture<>();
  private volatile int connections;

  private TracingProducer(Builder b) {
    this.name = b.name;
    this.socketPath = b.socketPath != null ? b.socketPath : ProducerSockets.defaultPath();
    this.smbSizeHint = b.smbSizeHint;
    this.smbPageSizeHint = b.smbPageSizeHint;
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

    /** shared_memory_page_size_hint_bytes (0: the service's default, 4 KiB). */
    public Builder smbPageSizeHint(int bytes) {
      this.smbPageSizeHint = bytes;
      return this;
    }

    /** Reconnect delays: initial, doubled after each failure up to max. */
    public Builder reconnectBackoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    public Builder dataSource(DataSource<?> dataSource) {
      dataSources.add(dataSource);
      return this;
    }

    /** Builds the producer and starts connecting (in the background). */
    public TracingProducer start() {
      TracingProducer p = new TracingProducer(this);
      p.executor.execute(p::connectNow);
      return p;
    }
  }

  public String name() {
    return name;
  }

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

  /** Connections initialized so far (1 after the first, 2 after a reconnect, ...). */
  public int connectionCount() {
    return connections;
  }

  /** Adds a data source; registered with the service now if connected, else on connecting. */
  public void register(DataSource<?> dataSource) {
    dataSources.add(dataSource);
    run(() -> {
      Connection c = connection;
      if (c != null && c.initialized) {
        c.registerDataSource(dataSource.descriptor());
      }
    });
  }

  /**
   * Removes a data source: UnregisterDataSource is sent if connected, its active instances stop
   * being traced (the service stops them), and it is not registered again on reconnecting.
   */
  public void unregister(DataSource<?> dataSource) {
    dataSources.remove(dataSource);
    run(() -> {
      Connection c = connection;
      if (c != null && c.initialized) {
        c.invokeNoReply("UnregisterDataSource",
            UnregisterDataSourceRequest.newBuilder().setDataSourceName(dataSource.name()).build());
      }
    });
  }

  /** UpdateDataSource; fails with METHOD_NOT_FOUND on a service that lacks it. */
  public CompletableFuture<Void> updateDataSource(DataSourceDescriptor descriptor) {
    return call("UpdateDataSource",
        UpdateDataSourceRequest.newBuilder().setDataSourceDescriptor(descriptor).build());
  }

  /** Sync: completes when the service has processed everything sent before; METHOD_NOT_FOUND if absent. */
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
      c.port.invoke(method, request).whenComplete((reply, err) -> {
        if (err != null) {
          result.completeExceptionally(err);
        } else {
          result.complete(null);
        }
      });
    });
    return result;
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
    // As upstream's SDK: both hints always present (0 = the service's default), SMB scraping asked
    // for (so the service can read chunks our idle writers still hold), and GetAsyncCommand
    // pipelined right behind InitializeConnection.
    InitializeConnectionRequest init = InitializeConnectionRequest.newBuilder()
        .setSharedMemoryPageSizeHintBytes(smbPageSizeHint)
        .setSharedMemorySizeHintBytes(smbSizeHint)
        .setProducerName(name)
        .setSmbScrapingMode(InitializeConnectionRequest.ProducerSMBScrapingMode.SMB_SCRAPING_ENABLED)
        .setSdkVersion(SDK_VERSION)
        .build();
    port.invoke("InitializeConnection", init).whenComplete((reply, e) -> run(() -> onInitialized(c, e)));
    port.invokeStreaming("GetAsyncCommand", GetAsyncCommandRequest.getDefaultInstance().toByteString(), -1,
        reply -> onAsyncCommandReply(c, reply));
  }

  private void onInitialized(Connection c, Throwable err) {
    if (c.lost) {
      return;
    }
    if (err != null) {
      LOG.log(Level.WARNING, "producer " + name + ": InitializeConnection failed: " + err.getMessage());
      onDisconnected(c, "InitializeConnection failed");
      return;
    }
    c.initialized = true;
    for (DataSource<?> ds : dataSources) {
      c.registerDataSource(ds.descriptor());
    }
    backoffMs = initialBackoffMs;
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
          Active<?> a = c.instances.get(id);
          if (a != null) {
            a.clearIncrementalState();
          }
        }
      }
      default -> LOG.log(Level.DEBUG, () -> "producer " + name + ": ignoring command " + cmd.getCmdCase());
    }
    Fds.closeQuietly(fd);
  }

  /** Maps the service's SMB after checking what came with setup_tracing. */
  private void setUpTracing(Connection c, int pageSizeKb, int fd) {
    try {
      if (c.arbiter != null) {
        LOG.log(Level.WARNING, "producer " + name + ": setup_tracing again; keeping the first SMB");
        return;
      }
      if (fd < 0) {
        LOG.log(Level.ERROR, "producer " + name + ": setup_tracing without a shared memory fd");
        return;
      }
      long pageSize = pageSizeKb * 1024L;
      if (pageSize > SharedMemoryAbi.MAX_PAGE_SIZE || !SharedMemoryAbi.isValidPageSize((int) pageSize)) {
        LOG.log(Level.ERROR, "producer " + name + ": setup_tracing page size invalid: page_size_kb=" + pageSizeKb);
        return;
      }
      long size = MemFd.size(fd);
      if (size <= 0 || size > MAX_SMB_SIZE || size % pageSize != 0) {
        LOG.log(Level.ERROR, "producer " + name + ": shared memory size invalid: size=" + size
            + " page=" + pageSize);
        return;
      }
      if (!shrinkSealedOrUnsealable(fd)) {
        LOG.log(Level.ERROR, "producer " + name + ": shared memory fd can shrink under us (no F_SEAL_SHRINK)");
        return;
      }
      MemorySegment smb = SharedMapping.map(fd, size, Arena.ofAuto());
      c.arbiter = new SharedMemoryArbiter(new SharedMemoryAbi(smb, (int) pageSize), c);
      LOG.log(Level.DEBUG, () -> "producer " + name + ": SMB mapped, size=" + size + " page=" + pageSize);
    } catch (ErrnoException e) {
      LOG.log(Level.ERROR, "producer " + name + ": mapping the shared memory failed: " + e.getMessage());
    } finally {
      Fds.closeQuietly(fd);
    }
  }

  /** A memfd must carry F_SEAL_SHRINK; a file that cannot be sealed at all is accepted, as upstream. */
  private static boolean shrinkSealedOrUnsealable(int fd) throws ErrnoException {
    try {
      return (MemFd.seals(fd) & MemFd.F_SEAL_SHRINK) != 0;
    } catch (ErrnoException e) {
      if (e.errno() == Errno.EINVAL) {
        return true;
      }
      throw e;
    }
  }

  private DataSource<?> dataSourceNamed(String dsName) {
    for (DataSource<?> ds : dataSources) {
      if (ds.name().equals(dsName)) {
        return ds;
      }
    }
    return null;
  }

  private Active<?> setUpInstance(Connection c, long id, DataSourceConfig config) {
    Active<?> existing = c.instances.get(id);
    if (existing != null) {
      return existing;
    }
    DataSource<?> ds = dataSourceNamed(config.getName());
    if (ds == null) {
      LOG.log(Level.WARNING, "producer " + name + ": no data source named " + config.getName());
      return null;
    }
    Active<?> a = Active.setUp(ds, id, config, c.arbiter);
    if (a != null) {
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
    Active<?> a = setUpInstance(c, id, config);
    if (a == null) {
      return;
    }
    a.start(c.arbiter);
    if (a.dataSource.descriptor().getWillNotifyOnStart()) {
      c.invokeNoReply("NotifyDataSourceStarted", NotifyDataSourceStartedRequest.newBuilder().setDataSourceId(id).build());
    }
  }

  private void stopInstance(Connection c, long id) {
    Active<?> a = c.instances.get(id);
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

  private void finishStop(Connection c, long id, Active<?> a) {
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
    java.util.Set<Integer> buffers = new java.util.HashSet<>();
    for (long id : flush.getDataSourceIdsList()) {
      Active<?> a = c.instances.get(id);
      if (a != null) {
        a.flush();
        buffers.add(a.instance.config().getTargetBuffer());
      }
    }
    if (c.arbiter != null) {
      awaitWriterFlush(c, c.arbiter.startWriterFlush(buffers::contains), flush.getRequestId(),
          System.nanoTime() + WRITER_FLUSH_WAIT_NANOS);
    } else {
      CommitBatch ack = new CommitBatch();
      ack.flushRequestId = flush.getRequestId();
      c.invokeNoReply("CommitData", CommitRequests.toProto(ack));
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
    for (Active<?> a : c.instances.values()) {
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
    BoundService port;
    SharedMemoryArbiter arbiter;
    boolean initialized;
    volatile boolean lost;
    final Map<Long, Active<?>> instances = new HashMap<>();
    private CommitBatch spare = new CommitBatch();
    private final Runnable drainTask = this::drain;

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

    /** Any thread: a writer completed something. */
    @Override
    public void commitPending() {
      if (!lost) {
        run(drainTask);
      }
    }

    private void drain() {
      if (arbiter == null || lost) {
        return;
      }
      CommitBatch batch = arbiter.drainTo(spare);
      if (!batch.isEmpty()) {
        invokeNoReply("CommitData", CommitRequests.toProto(batch));
      }
      spare = batch;
    }

    @Override
    public void registerTraceWriter(int writerId, int targetBuffer) {
      run(() -> invokeNoReply("RegisterTraceWriter", RegisterTraceWriterRequest.newBuilder()
          .setTraceWriterId(writerId).setTargetBuffer(targetBuffer).build()));
    }

    @Override
    public void unregisterTraceWriter(int writerId) {
      run(() -> invokeNoReply("UnregisterTraceWriter",
          UnregisterTraceWriterRequest.newBuilder().setTraceWriterId(writerId).build()));
    }
  }

  /** An instance of a data source in this connection (keeps the generic type together). */
  private static final class Active<S> {
    final DataSource<S> dataSource;
    final DataSourceInstance<S> instance;

    private Active(DataSource<S> dataSource, DataSourceInstance<S> instance) {
      this.dataSource = dataSource;
      this.instance = instance;
    }

    static <S> Active<S> setUp(DataSource<S> ds, long id, DataSourceConfig config, SharedMemoryArbiter arbiter) {
      int index = ds.freeSlot();
      if (index < 0) {
        return null;
      }
      DataSourceInstance<S> instance = new DataSourceInstance<>(id, index, config);
      ds.setUp(instance, arbiter, config.getTargetBuffer());
      instance.state(ds.handler().onSetup(instance));
      return new Active<>(ds, instance);
    }

    void start(SharedMemoryArbiter arbiter) {
      DataSource.Slot<S> slot = dataSource.slot(instance.index());
      if (slot.arbiter() != arbiter) {
        dataSource.setUp(instance, arbiter, instance.config().getTargetBuffer());
      }
      dataSource.handler().onStart(instance);
      dataSource.activate(instance.index());
    }

    void stop(DataSourceHandler.StopHandle handle) {
      dataSource.handler().onStop(instance, handle);
    }

    void release() {
      DataSource.Slot<S> slot = dataSource.slot(instance.index());
      if (slot != null && slot.instance() == instance) {
        dataSource.release(instance.index());
      }
    }

    void flush() {
      dataSource.handler().onFlush(instance);
    }

    void clearIncrementalState() {
      instance.clearIncrementalState();
      dataSource.handler().onClearIncrementalState(instance);
    }
  }
}
