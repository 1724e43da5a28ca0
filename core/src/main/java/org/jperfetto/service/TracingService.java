package org.jperfetto.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.service.buffer.BufferMemory;

/**
 * The tracing service core (upstream's TracingServiceImpl): producers and their data sources,
 * consumers and their tracing sessions, the trace buffers, and moving chunks from producers'
 * SMBs into those buffers. Transport-free: the socket host (service.ipc) and in-process users
 * drive it through {@link ProducerEndpoint} and {@link ConsumerEndpoint}.
 *
 * <p>This class is the facade: it wires the parts together, connects producers and consumers,
 * and holds the service-wide settings (its limits are {@link ServiceLimits}). The state is {@link ServiceState}'s (the
 * producers, consumers, registered data sources, sessions and buffers, and their ids); the parts
 * are handed that state, not the service: {@link SessionLifecycle} (enable, start, stop, free),
 * {@link DataSources} (registrations and their instances), {@link Flushes}, {@link SessionReader}
 * (reading a session out, write_into_file), {@link Triggers}, {@link SessionRequests}
 * (ChangeTraceConfig, Detach, Attach, CloneSession), {@link ServiceQueries} (service state,
 * capabilities, trace stats) and {@link SessionTasks} (delayed work on a session). Each
 * connection ({@link ProducerConnection}, {@link ConsumerConnection}) routes its requests to them.
 *
 * <p>Single-threaded: every method of the service and of its endpoints must run on the
 * {@link TaskRunner} given at construction (checked; calling from elsewhere throws
 * IllegalStateException). Timers (duration_ms, flush and stop timeouts) are posted on it too.
 */
public final class TracingService {
  private static final System.Logger LOG = System.getLogger(TracingService.class.getName());

  private final ServiceState state;
  private final RemoteMachines remoteMachines = new RemoteMachines();
  private final ServiceQueries queries;
  private final ProducerConnection.ServiceParts producerParts;
  private final ConsumerConnection.ServiceParts consumerParts;

  /**
   * @param runner the service thread
   * @param shmFactory makes producers' SMBs
   * @param clocks clock snapshots and service packet timestamps
   * @param serviceUid the uid stamped on the service's own packets
   */
  public TracingService(TaskRunner runner, SharedMemory.Factory shmFactory, ClockSource clocks,
      int serviceUid) {
    this.state = new ServiceState(runner, serviceUid);
    this.queries = new ServiceQueries(state);
    SessionTasks tasks = new SessionTasks(runner, state);
    Flushes flushes = new Flushes(state, tasks, clocks);
    SessionReader reader = new SessionReader(state, new ServicePackets(serviceUid, clocks), clocks, queries,
        remoteMachines);
    SessionLifecycle lifecycle = new SessionLifecycle(state, tasks, clocks, flushes, reader, queries, shmFactory);
    Triggers triggers = new Triggers(state, lifecycle, tasks, clocks);
    DataSources dataSources = lifecycle.dataSources();
    SessionRequests requests = new SessionRequests(state, dataSources, flushes, clocks,
        lifecycle::drainIntoFile);
    this.producerParts = new ProducerConnection.ServiceParts(state, dataSources, flushes, triggers, queries);
    this.consumerParts = new ConsumerConnection.ServiceParts(state, lifecycle, dataSources, flushes, reader,
        requests, queries);
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
    state.bufferMemory(memory);
  }

  /**
   * Caps the bytes all sessions' trace buffers may take together (unlimited by default): a session
   * whose buffers would pass it is refused. See {@link BufferBudget}.
   */
  public void limitBufferMemory(long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("buffer memory budget must be positive: " + maxBytes);
    }
    state.maxBufferBytes(maxBytes);
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
    state.defaultClearPeriodMs(ms);
  }

  /** How many sessions (clones included) this service has created; any thread. */
  public long sessionsCreated() {
    return state.sessionsCreated();
  }

  /** The machines relays connected (RelayPort); service thread only. */
  public RemoteMachines remoteMachines() {
    return remoteMachines;
  }

  /** The task runner every call into this service must run on (its service thread). */
  public TaskRunner taskRunner() {
    return state.runner();
  }

  /**
   * Test hook: with false, producers' SMBs are never scraped (on flush, stop or disconnect), so
   * only chunks a producer committed reach the buffers, whatever scraping mode it asked for.
   */
  public void setSmbScrapingForTesting(boolean enabled) {
    state.smbScraping(enabled);
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
    state.checkThread();
    ProducerConnection p = new ProducerConnection(producerParts, state.nextProducerId(), identity, name,
        sdkVersion, callbacks, smbSizeHint, pageSizeHint);
    if (!state.admits(identity)) {
      // Upstream refuses the connection; here the endpoint comes back already disconnected.
      producerProvidedSmb.ifPresent(SharedMemory::close);
      p.markDisconnected();
      String why = "lockdown mode: producer \"" + name + "\" of uid " + identity.uid() + " refused";
      LOG.log(System.Logger.Level.INFO, why);
      callbacks.onDisconnectedByService(why);
      return p;
    }
    state.addProducer(p);
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
    state.checkThread();
    ConsumerConnection c = new ConsumerConnection(consumerParts, uid, callbacks);
    state.addConsumer(c);
    return c;
  }

  // ===============================================================================================
  // Counts

  /** ABI violations counted at the producer port (bad chunk indexes, states, writers, buffers). */
  public long producerAbiViolations() {
    state.checkThread();
    return queries.abiViolations();
  }

  /**
   * Registrations and descriptor updates refused for passing
   * {@link ServiceLimits#MAX_DATA_SOURCES_PER_PRODUCER} or
   * {@link ServiceLimits#MAX_DESCRIPTOR_BYTES_PER_PRODUCER}.
   */
  public long dataSourcesRefused() {
    state.checkThread();
    return queries.dataSourcesRefused();
  }

  /** Number of connected producers. */
  public int producerCount() {
    state.checkThread();
    return state.producerCount();
  }

  /** Number of live tracing sessions. */
  public int sessionCount() {
    state.checkThread();
    return state.sessionCount();
  }
}
