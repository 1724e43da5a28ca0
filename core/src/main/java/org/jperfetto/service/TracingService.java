package org.jperfetto.service;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceEvent;
import org.jperfetto.service.buffer.OverwritePolicy;
import org.jperfetto.service.buffer.PatchBatch;
import org.jperfetto.service.buffer.BufferMemory;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * The tracing service core (upstream's TracingServiceImpl): producers and their data sources,
 * consumers and their tracing sessions, the trace buffers, and moving chunks from producers'
 * SMBs into those buffers. Transport-free: the socket host (service.ipc) and in-process users
 * drive it through {@link ProducerEndpoint} and {@link ConsumerEndpoint}.
 *
 * <p>This class is the core: connections, the data source registry, the session lifecycle
 * (enable, start, stop, free), flushes and chunk routing. Package-private collaborators on the
 * same thread hold the rest: {@link SessionReader} (reading a session out, write_into_file),
 * {@link Triggers}, {@link SessionRequests} (ChangeTraceConfig, Detach, Attach, CloneSession),
 * {@link ServiceQueries} (service state, capabilities, trace stats) and {@link SessionTasks}
 * (delayed work on a session).
 *
 * <p>Single-threaded: every method of the service and of its endpoints must run on the
 * {@link TaskRunner} given at construction (checked; calling from elsewhere throws
 * IllegalStateException). Timers (duration_ms, flush and stop timeouts) are posted on it too.
 */
public final class TracingService {
  private static final System.Logger LOG = System.getLogger(TracingService.class.getName());

  /** Largest ReadBuffersResponse slice (upstream kMaxTracePacketSliceSize: 128 KiB - 512). */
  public static final int MAX_SLICE_SIZE = 128 * 1024 - 512;
  /** About this many bytes of slices per {@link ConsumerCallbacks#onTraceData} batch. */
  public static final int READ_BATCH_BYTES = 128 * 1024;
  public static final int MAX_SESSIONS = 15;
  public static final int MAX_SESSIONS_PER_UID = 5;
  public static final int MAX_BUFFERS_PER_SESSION = 128;
  /**
   * Data sources one producer may have registered at once. Upstream's traced has no such limit; a
   * process has a few (Chrome and traced_probes register tens), so this only stops a producer
   * that would grow the registry, and every QueryServiceState answer, without end.
   */
  public static final int MAX_DATA_SOURCES_PER_PRODUCER = 1024;
  /**
   * Flushes of one session waiting for producers' acks (each holds a timer and sent a Flush
   * command to every producer of the session); past it a flush fails at once, as in upstream's
   * traced, which refuses past 1000.
   */
  public static final int MAX_PENDING_FLUSHES = 1000;
  /**
   * Encoded descriptor bytes one producer may have registered at once (a descriptor alone may be
   * as large as a frame, 128 KiB): with the count above, what a producer's registrations cost.
   */
  public static final long MAX_DESCRIPTOR_BYTES_PER_PRODUCER = 8L << 20;
  public static final int DEFAULT_FLUSH_TIMEOUT_MS = 5000;
  public static final int DEFAULT_DATA_SOURCE_STOP_TIMEOUT_MS = 5000;
  public static final long MAX_DURATION_MS = 7L * 24 * 3600 * 1000;
  /** Default interval of sync markers, clock snapshots and stats while tracing. */
  public static final int DEFAULT_SNAPSHOT_INTERVAL_MS = 10_000;
  /** trusted_packet_sequence_id of the service's own packets. */
  public static final int SERVICE_SEQUENCE_ID = 1;
  static final int MAX_ID = 0xFFFF;
  /** write_into_file drain period when the config gives none, and the smallest allowed. */
  public static final int DEFAULT_FILE_WRITE_PERIOD_MS = 5000;
  public static final int MIN_FILE_WRITE_PERIOD_MS = 100;
  /** Smallest flush_period_ms and incremental_state_config.clear_period_ms honoured. */
  public static final int MIN_PERIODIC_TASK_MS = 100;

  private final TaskRunner runner;
  private volatile BufferMemory bufferMemory = BufferMemory.ZEROED;
  private volatile long maxBufferBytes = Long.MAX_VALUE;
  private volatile int defaultClearPeriodMs = ClearPeriod.DEFAULT_MS;
  private final SharedMemory.Factory shmFactory;
  private final ClockSource clocks;
  private final int serviceUid;
  private final RemoteMachines remoteMachines = new RemoteMachines();
  /**
   * Set by a config's lockdown_mode LOCKDOWN_SET: producers of other uids are refused, and those
   * already connected get no data source instances.
   */
  private boolean lockdownMode;
  /** Off only in tests that must see data arrive through commits alone. */
  private volatile boolean smbScraping = true;

  private final Map<Integer, ProducerConnection> producers = new TreeMap<>();
  private final List<ConsumerConnection> consumers = new ArrayList<>();
  private final Map<Long, TracingSession> sessions = new LinkedHashMap<>();
  private final Map<Integer, TraceBuffer> buffers = new HashMap<>();
  /** Registered data sources, in registration order. */
  private final List<RegisteredDataSource> dataSources = new ArrayList<>();
  private final SessionTasks sessionTasks;
  private final SessionReader reader;
  private final Triggers triggers;
  private final SessionRequests sessionRequests;
  private final ServiceQueries queries;

  private int lastProducerId;
  private int lastBufferId;
  private long lastSessionId;
  /** Sessions created so far, readable from any thread (lastSessionId is the service thread's). */
  private volatile long sessionsCreated;
  private long lastInstanceId;
  private long lastFlushRequestId;

  record RegisteredDataSource(int producerId, DataSourceDescriptor descriptor) {}

  /**
   * @param runner the service thread
   * @param shmFactory makes producers' SMBs
   * @param clocks clock snapshots and service packet timestamps
   * @param serviceUid the uid stamped on the service's own packets
   */
  public TracingService(TaskRunner runner, SharedMemory.Factory shmFactory, ClockSource clocks,
      int serviceUid) {
    this.runner = runner;
    this.sessionTasks = new SessionTasks(runner, sessions);
    this.shmFactory = shmFactory;
    this.clocks = clocks;
    this.reader = new SessionReader(this, new ServicePackets(serviceUid, clocks), clocks);
    this.triggers = new Triggers(this, sessionTasks, clocks);
    this.sessionRequests = new SessionRequests(this, clocks);
    this.queries = new ServiceQueries(this);
    this.serviceUid = serviceUid;
  }

  /** A service with JDK clocks and this process's uid. */
  public TracingService(TaskRunner runner, SharedMemory.Factory shmFactory) {
    this(runner, shmFactory, ClockSource.jdk(), currentUid());
  }

  /**
   * The uid of this process, from /proc/self/status.
   *
   * @throws IllegalStateException if it cannot be read: guessing (root, say) would let lockdown
   *     mode admit producers it must refuse, so the service does not start instead
   */
  public static int currentUid() {
    return uidFromStatus(Path.of("/proc/self/status"));
  }

  /** The real uid on the "Uid:" line of a /proc/PID/status file; fails closed (see currentUid). */
  static int uidFromStatus(Path status) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("Uid:")) {
          return Integer.parseInt(line.substring(4).trim().split("\\s+")[0]);
        }
      }
      throw new IllegalStateException("cannot tell this process's uid: no Uid line in " + status);
    } catch (java.io.IOException | NumberFormatException e) {
      throw new IllegalStateException("cannot tell this process's uid from " + status + ": " + e, e);
    }
  }

  /**
   * Where new trace buffers get their memory (default {@link BufferMemory#ZEROED}); jtraced passes
   * memory the kernel commits as it is written. Set before the first session.
   */
  public void useBufferMemory(BufferMemory memory) {
    this.bufferMemory = java.util.Objects.requireNonNull(memory, "memory");
  }

  /**
   * Caps the bytes all sessions' trace buffers may take together (unlimited by default): a session
   * whose buffers would pass it is refused. See {@link BufferBudget}.
   */
  public void limitBufferMemory(long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("buffer memory budget must be positive: " + maxBytes);
    }
    this.maxBufferBytes = maxBytes;
  }

  /**
   * The incremental-state clear period of sessions that have a ring buffer and set none themselves
   * ({@link ClearPeriod#DEFAULT_MS} unless changed; 0: such sessions never clear, as in upstream's
   * traced). Applies to sessions started afterwards.
   */
  public void defaultClearPeriod(int ms) {
    if (ms < 0) {
      throw new IllegalArgumentException("default clear period must be 0 (off) or positive: " + ms);
    }
    this.defaultClearPeriodMs = ms;
  }

  int defaultClearPeriodMs() {
    return defaultClearPeriodMs;
  }

  /** How many sessions (clones included) this service has created; any thread. */
  public long sessionsCreated() {
    return sessionsCreated;
  }

  /** The machines relays connected (RelayPort); service thread only. */
  public RemoteMachines remoteMachines() {
    return remoteMachines;
  }

  /** The task runner every call into this service must run on (its service thread). */
  public TaskRunner taskRunner() {
    return runner;
  }

  SessionTasks sessionTasks() {
    return sessionTasks;
  }

  SessionReader reader() {
    return reader;
  }

  Triggers triggers() {
    return triggers;
  }

  SessionRequests sessionRequests() {
    return sessionRequests;
  }

  ServiceQueries queries() {
    return queries;
  }

  Collection<ProducerConnection> producers() {
    return producers.values();
  }

  /** The registered data sources, in registration order. */
  List<RegisteredDataSource> dataSources() {
    return java.util.Collections.unmodifiableList(dataSources);
  }

  /** The live session of that id, or null. */
  TracingSession liveSession(long id) {
    return sessions.get(id);
  }

  boolean hasConsumer(ConsumerConnection c) {
    return consumers.contains(c);
  }

  /** The live sessions (a view: copy it before a loop that may end one). */
  Collection<TracingSession> sessions() {
    return sessions.values();
  }

  TraceBuffer buffer(int id) {
    return buffers.get(id);
  }

  /**
   * Test hook: with false, producers' SMBs are never scraped (on flush, stop or disconnect), so
   * only chunks a producer committed reach the buffers, whatever scraping mode it asked for.
   */
  public void setSmbScrapingForTesting(boolean enabled) {
    smbScraping = enabled;
  }

  boolean smbScrapingEnabled() {
    return smbScraping;
  }

  void checkThread() {
    if (!runner.isOnRunnerThread()) {
      throw new IllegalStateException("tracing service called off its thread: "
          + Thread.currentThread().getName());
    }
  }

  // ===============================================================================================
  // Connections

  /**
   * A producer connected (InitializeConnection).
   *
   * @param smbSizeHint shared_memory_size_hint_bytes (0: default)
   * @param pageSizeHint shared_memory_page_size_hint_bytes (0: default)
   * @param producerProvidedSmb adopted only if sealed and exactly of valid sizes matching the hints;
   *     otherwise closed, and the service makes its own at the first data source setup
   * @throws IllegalStateException if 65535 producers are connected
   */
  public ProducerEndpoint connectProducer(ProducerCallbacks callbacks, ClientIdentity identity,
      String name, long smbSizeHint, long pageSizeHint, Optional<SharedMemory> producerProvidedSmb,
      String sdkVersion) {
    checkThread();
    int id = nextFreeId(lastProducerId, producers);
    lastProducerId = id;
    ProducerConnection p = new ProducerConnection(this, id, identity, name, sdkVersion, callbacks,
        smbSizeHint, pageSizeHint);
    if (lockdownMode && identity.uid() != serviceUid) {
      // Upstream refuses the connection; here the endpoint comes back already disconnected.
      producerProvidedSmb.ifPresent(SharedMemory::close);
      p.markDisconnected();
      String why = "lockdown mode: producer \"" + name + "\" of uid " + identity.uid() + " refused";
      LOG.log(System.Logger.Level.INFO, why);
      callbacks.onDisconnectedByService(why);
      return p;
    }
    producers.put(id, p);
    queries.countProducerConnected();
    if (producerProvidedSmb.isPresent()) {
      SharedMemory shm = producerProvidedSmb.get();
      ShmSizes valid = ShmSizes.validate(shm.size(), pageSizeHint);
      if (shm.sealed() && valid.size() == shm.size() && valid.pageSize() == pageSizeHint) {
        p.setupSharedMemory(shm, valid.pageSize(), true);
      } else {
        LOG.log(System.Logger.Level.INFO, "producer \"{0}\": refusing its SMB (sealed={1} size={2}"
            + " page={3}); the service will make one", name, shm.sealed(), shm.size(), pageSizeHint);
        shm.close();
      }
    }
    return p;
  }

  /** A consumer connected; uid is the peer's (SO_PEERCRED). */
  public ConsumerEndpoint connectConsumer(ConsumerCallbacks callbacks, int uid) {
    checkThread();
    ConsumerConnection c = new ConsumerConnection(this, uid, callbacks);
    consumers.add(c);
    return c;
  }

  void removeConsumer(ConsumerConnection c) {
    consumers.remove(c);
  }

  /** Unlinks a producer: scrapes its SMB, ends its data source instances, frees its state. */
  void disconnectProducer(ProducerConnection p, String reasonIfKicked) {
    p.scrapeSharedMemory();
    for (TracingSession s : sessions.values()) {
      List<DataSourceInstance> gone = new ArrayList<>();
      for (DataSourceInstance inst : s.instances) {
        if (inst.producerId == p.id) {
          gone.add(inst);
        }
      }
      s.instances.removeAll(gone);
      for (TracingSession.PendingFlush f : List.copyOf(s.pendingFlushes.values())) {
        if (f.producersPending.remove(p.id) && f.producersPending.isEmpty()) {
          completeFlush(s, f, true);
        }
      }
      if (s.state == TracingSession.State.DISABLING_WAITING_STOP_ACKS) {
        maybeFinishDisable(s);
      }
      maybeNotifyAllDataSourcesStarted(s);
    }
    dataSources.removeIf(d -> d.producerId() == p.id);
    producers.remove(p.id);
    p.markDisconnected();
    if (reasonIfKicked != null) {
      LOG.log(System.Logger.Level.WARNING, "disconnecting producer {0} \"{1}\": {2}", p.id, p.name,
          reasonIfKicked);
      p.callbacks.onDisconnectedByService(reasonIfKicked);
    }
  }

  // ===============================================================================================
  // Data sources

  String registerDataSource(ProducerConnection p, DataSourceDescriptor d) {
    if (d.getName().isEmpty()) {
      return "data source with an empty name: producer=" + p.id;
    }
    // As upstream: a producer may register several data sources of one name (a process with two
    // libraries, each with its own track_event), and every session gets an instance of each; only
    // a non-zero id already taken on this producer is refused (id 0: a producer that sets none).
    int registered = 0;
    long bytes = d.getSerializedSize();
    for (RegisteredDataSource r : dataSources) {
      if (r.producerId() != p.id) {
        continue;
      }
      if (d.getId() != 0 && r.descriptor().getId() == d.getId()) {
        return "data source \"" + d.getName() + "\" has the id " + d.getId()
            + " of data source \"" + r.descriptor().getName() + "\" already registered: producer=" + p.id;
      }
      registered++;
      bytes += r.descriptor().getSerializedSize();
    }
    if (registered >= MAX_DATA_SOURCES_PER_PRODUCER || bytes > MAX_DESCRIPTOR_BYTES_PER_PRODUCER) {
      return refuseDataSource(p, d, registered >= MAX_DATA_SOURCES_PER_PRODUCER
          ? "it has " + registered + " data sources registered, the limit is " + MAX_DATA_SOURCES_PER_PRODUCER
          : "its descriptors would take " + bytes + " bytes, the limit is " + MAX_DESCRIPTOR_BYTES_PER_PRODUCER);
    }
    RegisteredDataSource reg = new RegisteredDataSource(p.id, d);
    dataSources.add(reg);
    queries.countDataSourceRegistered();
    for (TracingSession s : sessions.values()) {
      if (s.state != TracingSession.State.CONFIGURED && s.state != TracingSession.State.STARTED) {
        continue;
      }
      for (TraceConfig.DataSource cfg : s.config.getDataSourcesList()) {
        if (cfg.getConfig().getName().equals(d.getName())) {
          DataSourceInstance inst = setupDataSource(s, cfg, p, d);
          if (inst != null && s.state == TracingSession.State.STARTED) {
            startDataSourceInstance(s, p, inst);
          }
        }
      }
    }
    return "";
  }

  /**
   * Counts and says why a registration (or a descriptor's update) is refused; the first refusal of
   * a producer is logged, the next ones only counted, so a producer that keeps trying cannot
   * flood the log.
   */
  private String refuseDataSource(ProducerConnection p, DataSourceDescriptor d, String why) {
    queries.countDataSourceRefused();
    String error = "data source \"" + d.getName() + "\" refused for producer " + p.id + " (\"" + p.name
        + "\"): " + why;
    if (p.firstRefusal()) {
      LOG.log(System.Logger.Level.WARNING, error);
    }
    return error;
  }

  void unregisterDataSource(ProducerConnection p, String name) {
    for (TracingSession s : sessions.values()) {
      for (DataSourceInstance inst : List.copyOf(s.instances)) {
        if (inst.producerId == p.id && inst.name().equals(name)) {
          if (inst.state == DataSourceInstance.State.STARTED
              || inst.state == DataSourceInstance.State.STARTING
              || inst.state == DataSourceInstance.State.CONFIGURED) {
            p.callbacks.stopDataSource(inst.instanceId);
          }
          s.instances.remove(inst);
          p.disallowTargetBuffer(inst.config.getTargetBuffer());
        }
      }
      if (s.state == TracingSession.State.DISABLING_WAITING_STOP_ACKS) {
        maybeFinishDisable(s);
      }
    }
    for (int i = 0; i < dataSources.size(); i++) {
      RegisteredDataSource r = dataSources.get(i);
      if (r.producerId() == p.id && r.descriptor().getName().equals(name)) {
        dataSources.remove(i);
        return;
      }
    }
  }

  void updateDataSource(ProducerConnection p, DataSourceDescriptor d) {
    int index = -1;
    long bytes = d.getSerializedSize();
    for (int i = 0; i < dataSources.size(); i++) {
      RegisteredDataSource r = dataSources.get(i);
      if (r.producerId() != p.id) {
        continue;
      }
      boolean same = d.getId() != 0 ? r.descriptor().getId() == d.getId()
          : r.descriptor().getName().equals(d.getName());
      if (same && index < 0) {
        index = i;
      } else {
        bytes += r.descriptor().getSerializedSize();
      }
    }
    if (index < 0) {
      return;
    }
    if (bytes > MAX_DESCRIPTOR_BYTES_PER_PRODUCER) {
      refuseDataSource(p, d, "its descriptors would take " + bytes + " bytes, the limit is "
          + MAX_DESCRIPTOR_BYTES_PER_PRODUCER + "; the old descriptor stays");
      return;
    }
    dataSources.set(index, new RegisteredDataSource(p.id, d));
  }

  /** Upstream's NameMatchesFilter: an exact name, or a regex matching the whole name. */
  static boolean producerMatches(String producerName, TraceConfig.DataSource cfg) {
    if (cfg.getProducerNameFilterCount() == 0 && cfg.getProducerNameRegexFilterCount() == 0) {
      return true;
    }
    if (cfg.getProducerNameFilterList().contains(producerName)) {
      return true;
    }
    for (String regex : cfg.getProducerNameRegexFilterList()) {
      try {
        if (Pattern.compile(regex).matcher(producerName).matches()) {
          return true;
        }
      } catch (PatternSyntaxException e) {
        // checked when the session was enabled
      }
    }
    return false;
  }

  private DataSourceInstance setupDataSource(TracingSession s, TraceConfig.DataSource cfg,
      ProducerConnection p, DataSourceDescriptor d) {
    if (lockdownMode && p.identity.uid() != serviceUid) {
      // Producers of other uids that connected before the lockdown get no data source either.
      LOG.log(System.Logger.Level.INFO, "lockdown mode: not setting up \"{0}\" on producer {1} of uid {2}",
          d.getName(), p.id, p.identity.uid());
      return null;
    }
    if (!producerMatches(p.name, cfg) || !MachineFilter.matches(p.identity, s.config, cfg)) {
      return null;
    }
    int relative = cfg.getConfig().getTargetBuffer();
    if (relative < 0 || relative >= s.bufferIds.length) {
      return null; // refused at enable time; kept as a guard
    }
    int bufferId = s.bufferIds[relative];
    TraceConfig.ProducerConfig producerConfig = TraceConfig.ProducerConfig.getDefaultInstance();
    for (TraceConfig.ProducerConfig pc : s.config.getProducersList()) {
      if (pc.getProducerName().equals(p.name)) {
        producerConfig = pc;
        break;
      }
    }
    DataSourceConfig.Builder dsc = cfg.getConfig().toBuilder()
        .setTargetBuffer(bufferId)
        .setTracingSessionId(s.id)
        .setTraceDurationMs(s.config.getDurationMs())
        .setStopTimeoutMs((int) s.dataSourceStopTimeoutMs())
        .setEnableExtraGuardrails(s.config.getEnableExtraGuardrails());
    if (s.config.getPreferSuspendClockForDuration()) {
      dsc.setPreferSuspendClockForDuration(true);
    }
    DataSourceInstance inst = new DataSourceInstance(++lastInstanceId, p.id, dsc.build(), d);
    s.instances.add(inst);
    p.allowTargetBuffer(bufferId);
    if (!p.hasSharedMemory()) {
      long page = producerConfig.getPageSizeKb() * 1024L;
      long size = producerConfig.getShmSizeKb() * 1024L;
      ShmSizes sizes = ShmSizes.validate(size != 0 ? size : p.smbSizeHint,
          page != 0 ? page : p.pageSizeHint);
      p.setupSharedMemory(shmFactory.create(sizes.size()), sizes.pageSize(), false);
    }
    p.callbacks.setupDataSource(inst.instanceId, inst.config);
    return inst;
  }

  private void startDataSourceInstance(TracingSession s, ProducerConnection p, DataSourceInstance inst) {
    inst.state = inst.descriptor.getWillNotifyOnStart() ? DataSourceInstance.State.STARTING
        : DataSourceInstance.State.STARTED;
    p.callbacks.startDataSource(inst.instanceId, inst.config);
    if (inst.state == DataSourceInstance.State.STARTED) {
      notifyInstanceState(s, inst, true);
    }
  }

  /**
   * An instance of every registered data source the session's config names (on the producers its
   * filters admit), started if the session is; with onlyMissing, none for a producer's data
   * source the session already has an instance of (ChangeTraceConfig widening a filter).
   */
  void setUpInstances(TracingSession s, boolean onlyMissing) {
    for (TraceConfig.DataSource dsCfg : s.config.getDataSourcesList()) {
      // Decided before any is set up: a producer with several registrations of the name gets an
      // instance for each, not only for the first.
      Set<Integer> alreadySetUp = onlyMissing ? producersWithInstance(s, dsCfg.getConfig().getName()) : Set.of();
      for (RegisteredDataSource r : List.copyOf(dataSources)) {
        if (!r.descriptor().getName().equals(dsCfg.getConfig().getName())
            || alreadySetUp.contains(r.producerId())) {
          continue;
        }
        ProducerConnection p = producers.get(r.producerId());
        DataSourceInstance inst = setupDataSource(s, dsCfg, p, r.descriptor());
        if (inst != null && s.state == TracingSession.State.STARTED) {
          startDataSourceInstance(s, p, inst);
        }
      }
    }
  }

  private static Set<Integer> producersWithInstance(TracingSession s, String name) {
    Set<Integer> producerIds = new HashSet<>();
    for (DataSourceInstance inst : s.instances) {
      if (inst.name().equals(name)) {
        producerIds.add(inst.producerId);
      }
    }
    return producerIds;
  }

  /** ObservableEvents TYPE_DATA_SOURCES_INSTANCES to the session's consumer, if it asked. */
  private void notifyInstanceState(TracingSession s, DataSourceInstance inst, boolean started) {
    ConsumerConnection c = s.consumer;
    if (c == null || !c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES)) {
      return;
    }
    ProducerConnection p = producers.get(inst.producerId);
    c.callbacks.onObservableEvents(ObservableEvents.newBuilder().addInstanceStateChanges(
        ObservableEvents.DataSourceInstanceStateChange.newBuilder()
            .setProducerName(p != null ? p.name : "")
            .setDataSourceName(inst.name())
            .setState(started ? ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED
                : ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED))
        .build());
  }

  void observeEvents(ConsumerConnection c, int mask) {
    boolean had = c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES);
    c.observedEvents = mask;
    if (!had && c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES) && c.session != null) {
      for (DataSourceInstance inst : c.session.instances) {
        boolean started = inst.state == DataSourceInstance.State.STARTED;
        if (started || inst.state == DataSourceInstance.State.STOPPED) {
          notifyInstanceState(c.session, inst, started);
        }
      }
    }
  }

  void notifyDataSourceStarted(ProducerConnection p, long instanceId) {
    for (TracingSession s : sessions.values()) {
      for (DataSourceInstance inst : s.instances) {
        if (inst.instanceId == instanceId && inst.producerId == p.id
            && inst.state == DataSourceInstance.State.STARTING) {
          inst.state = DataSourceInstance.State.STARTED;
          notifyInstanceState(s, inst, true);
          maybeNotifyAllDataSourcesStarted(s);
        }
      }
    }
  }

  void notifyDataSourceStopped(ProducerConnection p, long instanceId) {
    for (TracingSession s : sessions.values()) {
      for (DataSourceInstance inst : s.instances) {
        if (inst.instanceId == instanceId && inst.producerId == p.id
            && inst.state != DataSourceInstance.State.STOPPED) {
          inst.state = DataSourceInstance.State.STOPPED;
          notifyInstanceState(s, inst, false);
          if (s.state == TracingSession.State.DISABLING_WAITING_STOP_ACKS) {
            maybeFinishDisable(s);
          }
        }
      }
    }
  }

  private void maybeNotifyAllDataSourcesStarted(TracingSession s) {
    if (s.state != TracingSession.State.STARTED || s.allDataSourcesStartedNotified) {
      return;
    }
    for (DataSourceInstance inst : s.instances) {
      if (inst.state == DataSourceInstance.State.STARTING) {
        return;
      }
    }
    s.allDataSourcesStartedNotified = true;
    s.addLifecycleEvent(TracingServiceEvent.ALL_DATA_SOURCES_STARTED_FIELD_NUMBER, clocks.now());
    ConsumerConnection c = s.consumer;
    if (c != null && c.observes(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED)) {
      c.callbacks.onObservableEvents(ObservableEvents.newBuilder().setAllDataSourcesStarted(true).build());
    }
  }

  // ===============================================================================================
  // Sessions

  @SuppressWarnings("deprecation") // trace_uuid_msb/lsb: deprecated upstream, still what perfetto sends
  String enableTracing(ConsumerConnection c, TraceConfig cfg,
      Optional<ConsumerEndpoint.TraceFileSink> fileSink) {
    if (c.session != null) {
      return "the consumer is already tracing: session=" + c.session.id;
    }
    String error = SessionConfigCheck.check(cfg, fileSink.isPresent());
    if (error != null) {
      return error;
    }
    if (!cfg.getUniqueSessionName().isEmpty()) {
      for (TracingSession s : sessions.values()) {
        if (s.state != TracingSession.State.CLONED_READ_ONLY
            && s.config.getUniqueSessionName().equals(cfg.getUniqueSessionName())) {
          return "A trace with this unique session name (" + cfg.getUniqueSessionName()
              + ") already exists";
        }
      }
    }
    int ofUid = 0;
    for (TracingSession s : sessions.values()) {
      if (s.consumerUid == c.uid) {
        ofUid++;
      }
    }
    if (ofUid >= MAX_SESSIONS_PER_UID) {
      return "Too many concurrent tracing sessions (" + ofUid + ") for uid " + c.uid + " limit is "
          + MAX_SESSIONS_PER_UID;
    }
    if (sessions.size() >= MAX_SESSIONS) {
      return "Too many concurrent tracing sessions (" + sessions.size() + ")";
    }
    if (buffers.size() + cfg.getBuffersCount() > MAX_ID) {
      return "Too many trace buffers in the service: buffers=" + buffers.size();
    }
    String overBudget = BufferBudget.check(maxBufferBytes, buffers.values(), cfg);
    if (overBudget != null) {
      return overBudget;
    }
    int[] ids = new int[cfg.getBuffersCount()];
    for (int i = 0; i < ids.length; i++) {
      TraceConfig.BufferConfig b = cfg.getBuffers(i);
      long bytes = b.getSizeKb() * 1024L;
      TraceBuffer buffer;
      try {
        buffer = TraceBuffer.create(bytes, b.getFillPolicy() == TraceConfig.BufferConfig.FillPolicy.DISCARD
            ? OverwritePolicy.DISCARD : OverwritePolicy.RING_BUFFER, bufferMemory);
      } catch (RuntimeException | OutOfMemoryError e) {
        for (int j = 0; j < i; j++) {
          buffers.remove(ids[j]).close();
        }
        LOG.log(System.Logger.Level.WARNING, "refusing a session: trace buffer " + i + " of " + b.getSizeKb()
            + " KB cannot be allocated: " + e);
        return "Failed to allocate trace buffer " + i + " (" + b.getSizeKb() + " KB): " + e.getMessage();
      }
      ids[i] = addBuffer(buffer);
    }
    UUID uuid = cfg.getTraceUuidMsb() != 0 || cfg.getTraceUuidLsb() != 0
        ? new UUID(cfg.getTraceUuidMsb(), cfg.getTraceUuidLsb()) : UUID.randomUUID();
    TracingSession s = newSession(c, cfg, ids, uuid);
    s.fileSink = fileSink.orElse(null);
    if (cfg.getLockdownMode() == TraceConfig.LockdownModeOperation.LOCKDOWN_SET) {
      lockdownMode = true;
    } else if (cfg.getLockdownMode() == TraceConfig.LockdownModeOperation.LOCKDOWN_CLEAR) {
      lockdownMode = false;
    }
    setUpInstances(s, false);
    if (s.triggerMode() == TraceConfig.TriggerConfig.TriggerMode.START_TRACING) {
      triggers.armStartTimeout(s);
    } else if (!cfg.getDeferredStart()) {
      startTracing(s);
    }
    return "";
  }

  /** A new live session, consumer c's one; ids are its buffers (already added). */
  TracingSession newSession(ConsumerConnection c, TraceConfig cfg, int[] ids, UUID uuid) {
    TracingSession s = new TracingSession(++lastSessionId, c, c.uid, cfg, ids, uuid);
    sessionsCreated = lastSessionId;
    sessions.put(s.id, s);
    c.session = s;
    return s;
  }

  /** Adds a trace buffer under the next free id, which it returns. */
  int addBuffer(TraceBuffer buffer) {
    int id = nextFreeId(lastBufferId, buffers);
    lastBufferId = id;
    buffers.put(id, buffer);
    return id;
  }

  int bufferCount() {
    return buffers.size();
  }

  void startTracing(TracingSession s) {
    if (s.state != TracingSession.State.CONFIGURED) {
      return;
    }
    s.state = TracingSession.State.STARTED;
    s.clockSnapshots.add(clocks.snapshot());
    s.addLifecycleEvent(TracingServiceEvent.TRACING_STARTED_FIELD_NUMBER, clocks.now());
    for (DataSourceInstance inst : List.copyOf(s.instances)) {
      startDataSourceInstance(s, producers.get(inst.producerId), inst);
    }
    maybeNotifyAllDataSourcesStarted(s);
    if (s.state == TracingSession.State.STARTED) { // a callback above may have stopped it
      periodicSnapshot(s, true);
    }
    PeriodicTasks.start(this, s);
    triggers.armStopTimeout(s);
    if (s.config.getDurationMs() > 0) {
      s.durationTimer = sessionTasks.after(s.config.getDurationMs(), s,
          SessionTasks.in(TracingSession.State.STARTED), this::flushAndDisable);
    }
  }

  /** The end of a traced session by time or trigger: a last flush, then the stop. */
  void flushAndDisable(TracingSession s) {
    flush(s, 0, ServiceFlushFlags.TRACE_STOP, ok -> {
      // kept for TraceStats.final_flush_outcome, as traced does
      s.finalFlushOutcome = ok ? TraceStats.FinalFlushOutcome.FINAL_FLUSH_SUCCEEDED
          : TraceStats.FinalFlushOutcome.FINAL_FLUSH_FAILED;
      disableTracing(s);
    });
  }

  /** Sync marker, clock snapshot and stats every snapshot_interval_ms while tracing. */
  private void periodicSnapshot(TracingSession s, boolean first) {
    s.shouldEmitSyncMarker = true;
    s.shouldEmitStats = true;
    if (!first) {
      s.clockSnapshots.add(clocks.snapshot()); // the first was taken at start
    }
    int interval = s.config.getBuiltinDataSources().getSnapshotIntervalMs();
    sessionTasks.after(interval > 0 ? interval : DEFAULT_SNAPSHOT_INTERVAL_MS, s,
        SessionTasks.in(TracingSession.State.STARTED), live -> periodicSnapshot(live, false));
  }

  void disableTracing(TracingSession s) {
    switch (s.state) {
      case CONFIGURED -> {
        finishDisable(s); // never started: nothing to stop
        return;
      }
      case STARTED -> { }
      case CLONED_READ_ONLY -> {
        if (s.consumer != null) {
          s.consumer.callbacks.onTracingDisabled(""); // a snapshot: nothing runs
        }
        return;
      }
      default -> {
        return;
      }
    }
    SessionTasks.cancel(s.durationTimer);
    s.state = TracingSession.State.DISABLING_WAITING_STOP_ACKS;
    for (DataSourceInstance inst : s.instances) {
      ProducerConnection p = producers.get(inst.producerId);
      boolean waits = inst.descriptor.getWillNotifyOnStop();
      inst.state = waits ? DataSourceInstance.State.STOPPING : DataSourceInstance.State.STOPPED;
      p.callbacks.stopDataSource(inst.instanceId);
      if (!waits) {
        notifyInstanceState(s, inst, false);
      }
    }
    s.stopTimer = sessionTasks.after(s.dataSourceStopTimeoutMs(), s,
        SessionTasks.in(TracingSession.State.DISABLING_WAITING_STOP_ACKS), live -> {
          LOG.log(System.Logger.Level.INFO, "session {0}: data sources did not ack the stop in {1} ms",
              live.id, live.dataSourceStopTimeoutMs());
          finishDisable(live);
        });
    maybeFinishDisable(s);
  }

  private void maybeFinishDisable(TracingSession s) {
    for (DataSourceInstance inst : s.instances) {
      if (inst.state == DataSourceInstance.State.STOPPING) {
        return;
      }
    }
    finishDisable(s);
  }

  private void finishDisable(TracingSession s) {
    SessionTasks.cancel(s.stopTimer);
    SessionTasks.cancel(s.triggerTimer);
    SessionTasks.cancel(s.durationTimer);
    for (DataSourceInstance inst : s.instances) {
      ProducerConnection p = producers.get(inst.producerId);
      if (p != null) {
        p.scrapeSharedMemory();
      }
    }
    boolean wasStarted = s.state != TracingSession.State.CONFIGURED;
    s.state = TracingSession.State.DISABLED;
    if (wasStarted) {
      s.clockSnapshots.add(clocks.snapshot());
    }
    s.addLifecycleEvent(TracingServiceEvent.TRACING_DISABLED_FIELD_NUMBER, clocks.now());
    s.shouldEmitStats = true;
    for (int id : s.bufferIds) {
      // No more data can come: stop accepting chunks (late commits are discarded).
      buffers.get(id).setReadOnly();
    }
    if (s.fileSink != null) {
      reader.drainIntoFile(s); // the last drain
      s.fileSink = null;
    }
    if (s.consumer != null) {
      s.consumer.callbacks.onTracingDisabled(s.fileWriteError == null ? "" : s.fileWriteError);
    }
  }

  /** Ends a session and frees its buffers (FreeBuffers, consumer disconnect). */
  void freeSession(TracingSession s) {
    if (s.state == TracingSession.State.STARTED
        || s.state == TracingSession.State.DISABLING_WAITING_STOP_ACKS) {
      for (DataSourceInstance inst : s.instances) {
        ProducerConnection p = producers.get(inst.producerId);
        if (p != null && inst.state != DataSourceInstance.State.STOPPED) {
          p.callbacks.stopDataSource(inst.instanceId);
        }
      }
    }
    SessionTasks.cancel(s.durationTimer);
    SessionTasks.cancel(s.stopTimer);
    SessionTasks.cancel(s.triggerTimer);
    for (TracingSession.PendingFlush f : s.pendingFlushes.values()) {
      SessionTasks.cancel(f.timeout);
    }
    s.pendingFlushes.clear();
    for (DataSourceInstance inst : s.instances) {
      ProducerConnection p = producers.get(inst.producerId);
      if (p != null) {
        p.disallowTargetBuffer(inst.config.getTargetBuffer());
      }
    }
    s.instances.clear();
    for (int id : s.bufferIds) {
      TraceBuffer b = buffers.remove(id);
      if (b != null) {
        b.close();
      }
    }
    s.readCursor = null; // a read in progress ends with the session
    s.state = TracingSession.State.DISABLED;
    sessions.remove(s.id);
    if (s.consumer != null && s.consumer.session == s) {
      s.consumer.session = null;
    }
  }

  // ===============================================================================================
  // Flush

  void flush(TracingSession s, long timeoutMs, long flags, Consumer<Boolean> done) {
    if (s.pendingFlushes.size() >= MAX_PENDING_FLUSHES) {
      if (!s.flushRefusalLogged) {
        s.flushRefusalLogged = true;
        LOG.log(System.Logger.Level.WARNING, "session {0}: flush refused, {1} flushes pending (the limit)",
            s.id, s.pendingFlushes.size());
      }
      done.accept(false);
      return;
    }
    long requestId = ++lastFlushRequestId;
    TracingSession.PendingFlush f = new TracingSession.PendingFlush(requestId, done);
    s.flushesRequested++;
    s.addLifecycleEvent(TracingServiceEvent.FLUSH_STARTED_FIELD_NUMBER, clocks.now());
    Map<Integer, List<Long>> byProducer = new TreeMap<>();
    if (s.state == TracingSession.State.STARTED) {
      for (DataSourceInstance inst : s.instances) {
        if (!inst.descriptor.getNoFlush() && inst.state != DataSourceInstance.State.STOPPED) {
          byProducer.computeIfAbsent(inst.producerId, k -> new ArrayList<>()).add(inst.instanceId);
        }
      }
    }
    s.pendingFlushes.put(requestId, f);
    f.producersPending.addAll(byProducer.keySet());
    for (Map.Entry<Integer, List<Long>> e : byProducer.entrySet()) {
      long[] ids = e.getValue().stream().mapToLong(Long::longValue).toArray();
      producers.get(e.getKey()).callbacks.flush(requestId, ids, flags);
    }
    if (s.pendingFlushes.get(requestId) != f) {
      return; // every producer acked from within its flush callback
    }
    if (f.producersPending.isEmpty()) {
      completeFlush(s, f, true);
      return;
    }
    f.timeout = sessionTasks.after(timeoutMs > 0 ? timeoutMs : s.flushTimeoutMs(), s,
        live -> live.pendingFlushes.get(requestId) == f, live -> {
          LOG.log(System.Logger.Level.INFO, "session {0}: flush {1} timed out waiting for producers {2}",
              live.id, requestId, f.producersPending);
          completeFlush(live, f, false);
        });
  }

  /** A producer acked flush requestId, which also acks every earlier request it was part of. */
  void notifyFlushDone(ProducerConnection p, long requestId) {
    for (TracingSession s : List.copyOf(sessions.values())) {
      for (TracingSession.PendingFlush f : List.copyOf(s.pendingFlushes.values())) {
        if (f.requestId <= requestId && f.producersPending.remove(p.id)
            && f.producersPending.isEmpty()) {
          completeFlush(s, f, true);
        }
      }
    }
  }

  private void completeFlush(TracingSession s, TracingSession.PendingFlush f, boolean success) {
    s.pendingFlushes.remove(f.requestId);
    SessionTasks.cancel(f.timeout);
    for (DataSourceInstance inst : s.instances) {
      ProducerConnection p = producers.get(inst.producerId);
      if (p != null) {
        p.scrapeSharedMemory();
      }
    }
    if (success) {
      s.flushesSucceeded++;
    } else {
      s.flushesFailed++;
    }
    s.addLifecycleEvent(TracingServiceEvent.ALL_DATA_SOURCES_FLUSHED_FIELD_NUMBER, clocks.now());
    f.done.accept(success);
  }

  // ===============================================================================================
  // Chunks

  /**
   * Copies one chunk of producer p into buffer bufferId. Returns null, or why the copy was refused
   * (the buffer is not one of p's sessions, or not the one its writer registered for).
   */
  String copyChunk(ProducerConnection p, int writerId, int chunkId, int bufferId, int packetCount,
      int flags, boolean complete, MemorySegment src, long offset, long size) {
    TraceBuffer buf = buffers.get(bufferId);
    if (buf == null || buf.isReadOnly()) {
      queries.countDiscardedChunk(); // the session is gone or stopped: a late commit, not an offence
      return null;
    }
    if (!p.isAllowedTargetBuffer(bufferId)) {
      queries.countDiscardedChunk();
      return "write into a buffer of another session: buffer=" + bufferId + " writer=" + writerId;
    }
    Integer registered = p.bufferForWriter(writerId);
    if (registered != null && registered != bufferId) {
      queries.countDiscardedChunk();
      return "writer registered for buffer " + registered + " wrote into buffer " + bufferId
          + ": writer=" + writerId;
    }
    buf.copyChunkUntrusted(p.id, p.identity.uid(), p.identity.pid(), p.identity.machineId(), writerId, chunkId,
        packetCount, flags, complete, src, offset, size);
    return null;
  }

  /** Patches go through TraceBuffer, which finds the chunk by this producer's id only. */
  void patchChunk(ProducerConnection p, int bufferId, int writerId, int chunkId, PatchBatch patches,
      boolean morePatches) {
    TraceBuffer buf = buffers.get(bufferId);
    if (buf == null || buf.isReadOnly()) {
      queries.countDiscardedPatches(patches.count());
      return;
    }
    buf.tryPatchChunkContents(p.id, writerId, chunkId, patches, morePatches);
  }

  // ===============================================================================================
  // Incremental state

  /** clear_incremental_state to every producer with instances that handle it. */
  void clearIncrementalState(TracingSession s) {
    Map<Integer, List<Long>> byProducer = new TreeMap<>();
    for (DataSourceInstance inst : s.instances) {
      if (inst.descriptor.getHandlesIncrementalStateClear()
          && inst.state == DataSourceInstance.State.STARTED) {
        byProducer.computeIfAbsent(inst.producerId, k -> new ArrayList<>()).add(inst.instanceId);
      }
    }
    for (Map.Entry<Integer, List<Long>> e : byProducer.entrySet()) {
      producers.get(e.getKey()).callbacks.clearIncrementalState(
          e.getValue().stream().mapToLong(Long::longValue).toArray());
    }
  }

  // ===============================================================================================
  // Counts

  /** ABI violations counted at the producer port (bad chunk indexes, states, writers, buffers). */
  public long producerAbiViolations() {
    checkThread();
    return queries.abiViolations();
  }

  /**
   * Registrations and descriptor updates refused for passing {@link #MAX_DATA_SOURCES_PER_PRODUCER}
   * or {@link #MAX_DESCRIPTOR_BYTES_PER_PRODUCER}.
   */
  public long dataSourcesRefused() {
    checkThread();
    return queries.dataSourcesRefused();
  }

  /** Number of connected producers. */
  public int producerCount() {
    checkThread();
    return producers.size();
  }

  /** Number of live tracing sessions. */
  public int sessionCount() {
    checkThread();
    return sessions.size();
  }

  // ===============================================================================================

  /** The next id in 1..65535 after last that map does not hold. */
  private static int nextFreeId(int last, Map<Integer, ?> inUse) {
    if (inUse.size() >= MAX_ID) {
      throw new IllegalStateException("all 65535 ids in use");
    }
    int id = last;
    do {
      id = id % MAX_ID + 1;
    } while (inUse.containsKey(id));
    return id;
  }
}
