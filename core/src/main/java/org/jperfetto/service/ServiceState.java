package org.jperfetto.service;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.buffer.BufferMemory;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * What the tracing service holds (upstream's tracing_service_structs next to the impl): the
 * connected producers and consumers, the registered data sources, the live sessions by id, the
 * trace buffers by id, the id allocators, lockdown mode and the service-wide settings. The parts
 * that drive sessions, data sources, flushes and reads are handed this state, not the service.
 *
 * <p>Service thread only, like every part of the service ({@link #checkThread}); the settings
 * are volatile because the embedding code may set them before the service thread runs.
 */
final class ServiceState {
  /** The largest producer and buffer id (ids are 1..65535 and reused once freed). */
  static final int MAX_ID = 0xFFFF;

  private final TaskRunner runner;
  private final int serviceUid;

  private volatile BufferMemory bufferMemory = BufferMemory.ZEROED;
  private volatile long maxBufferBytes = Long.MAX_VALUE;
  private volatile int defaultClearPeriodMs = ClearPeriod.DEFAULT_MS;
  /** Off only in tests that must see data arrive through commits alone. */
  private volatile boolean smbScraping = true;
  /**
   * Set by a config's lockdown_mode LOCKDOWN_SET: producers of other uids are refused, and those
   * already connected get no data source instances.
   */
  private boolean lockdownMode;

  private final Map<Integer, ProducerConnection> producers = new TreeMap<>();
  private final List<ConsumerConnection> consumers = new ArrayList<>();
  private final Map<Long, ServiceSession> sessions = new LinkedHashMap<>();
  private final Map<Integer, TraceBuffer> buffers = new HashMap<>();
  /** Registered data sources, in registration order. */
  private final List<RegisteredDataSource> dataSources = new ArrayList<>();

  private int lastProducerId;
  private int lastBufferId;
  private long lastSessionId;
  /** Sessions created so far, readable from any thread (lastSessionId is the service thread's). */
  private volatile long sessionsCreated;
  private long lastInstanceId;
  private long lastFlushRequestId;

  /**
   * @param runner the service thread, the only one allowed in
   * @param serviceUid the service's own uid (lockdown mode admits only producers of it)
   */
  ServiceState(TaskRunner runner, int serviceUid) {
    this.runner = runner;
    this.serviceUid = serviceUid;
  }

  TaskRunner runner() {
    return runner;
  }

  /** @throws IllegalStateException off the service thread */
  void checkThread() {
    if (!runner.isOnRunnerThread()) {
      throw new IllegalStateException("tracing service called off its thread: "
          + Thread.currentThread().getName());
    }
  }

  int serviceUid() {
    return serviceUid;
  }

  // ---------------------------------------------------------------------------------------------
  // Settings

  BufferMemory bufferMemory() {
    return bufferMemory;
  }

  void bufferMemory(BufferMemory memory) {
    this.bufferMemory = Objects.requireNonNull(memory, "memory");
  }

  long maxBufferBytes() {
    return maxBufferBytes;
  }

  void maxBufferBytes(long maxBytes) {
    this.maxBufferBytes = maxBytes;
  }

  int defaultClearPeriodMs() {
    return defaultClearPeriodMs;
  }

  void defaultClearPeriodMs(int ms) {
    this.defaultClearPeriodMs = ms;
  }

  boolean smbScraping() {
    return smbScraping;
  }

  void smbScraping(boolean enabled) {
    this.smbScraping = enabled;
  }

  // ---------------------------------------------------------------------------------------------
  // Lockdown

  /** Whether a client may trace here: any while not in lockdown mode, else only the service's uid. */
  boolean admits(ClientIdentity identity) {
    return !lockdownMode || identity.uid() == serviceUid;
  }

  /** A new session's lockdown_mode: SET and CLEAR switch lockdown mode, anything else leaves it. */
  void applyLockdown(TraceConfig.LockdownModeOperation op) {
    if (op == TraceConfig.LockdownModeOperation.LOCKDOWN_SET) {
      lockdownMode = true;
    } else if (op == TraceConfig.LockdownModeOperation.LOCKDOWN_CLEAR) {
      lockdownMode = false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Producers and consumers

  /**
   * Takes the next free producer id.
   *
   * @throws IllegalStateException if 65535 producers are connected
   */
  int nextProducerId() {
    lastProducerId = nextFreeId(lastProducerId, producers);
    return lastProducerId;
  }

  void addProducer(ProducerConnection p) {
    producers.put(p.id, p);
  }

  void removeProducer(ProducerConnection p) {
    producers.remove(p.id);
  }

  /** The connected producer of that id, or null. */
  ProducerConnection producer(int id) {
    return producers.get(id);
  }

  /** The connected producers, by id. */
  Collection<ProducerConnection> producers() {
    return Collections.unmodifiableCollection(producers.values());
  }

  int producerCount() {
    return producers.size();
  }

  void addConsumer(ConsumerConnection c) {
    consumers.add(c);
  }

  void removeConsumer(ConsumerConnection c) {
    consumers.remove(c);
  }

  boolean hasConsumer(ConsumerConnection c) {
    return consumers.contains(c);
  }

  // ---------------------------------------------------------------------------------------------
  // Data sources

  /** The registered data sources, in registration order. */
  List<RegisteredDataSource> dataSources() {
    return Collections.unmodifiableList(dataSources);
  }

  void addDataSource(RegisteredDataSource d) {
    dataSources.add(d);
  }

  /** Puts d in the place of the registration at index (of {@link #dataSources}). */
  void replaceDataSource(int index, RegisteredDataSource d) {
    dataSources.set(index, d);
  }

  void removeDataSource(int index) {
    dataSources.remove(index);
  }

  /** Forgets every data source producer producerId registered. */
  void removeDataSourcesOf(int producerId) {
    dataSources.removeIf(d -> d.producerId() == producerId);
  }

  long nextInstanceId() {
    return ++lastInstanceId;
  }

  // ---------------------------------------------------------------------------------------------
  // Sessions

  /** A new live session, consumer c's one; ids are its buffers (already added). */
  ServiceSession newSession(ConsumerConnection c, TraceConfig cfg, int[] ids, UUID uuid) {
    ServiceSession s = new ServiceSession(++lastSessionId, c, c.uid, cfg, ids, uuid);
    sessionsCreated = lastSessionId;
    sessions.put(s.id, s);
    c.session = s;
    return s;
  }

  /** Forgets session s (its buffers are freed apart). */
  void removeSession(ServiceSession s) {
    sessions.remove(s.id);
  }

  /** The live session of that id, or null. */
  ServiceSession liveSession(long id) {
    return sessions.get(id);
  }

  /** The live sessions in creation order (a view: copy it before a loop that may end one). */
  Collection<ServiceSession> sessions() {
    return Collections.unmodifiableCollection(sessions.values());
  }

  int sessionCount() {
    return sessions.size();
  }

  /** How many sessions (clones included) were created so far; any thread. */
  long sessionsCreated() {
    return sessionsCreated;
  }

  /** The live sessions of consumers of that uid. */
  int sessionsOfUid(int uid) {
    int n = 0;
    for (ServiceSession s : sessions.values()) {
      if (s.consumerUid == uid) {
        n++;
      }
    }
    return n;
  }

  /** The first live session, clones aside, whose unique_session_name is name; or null. */
  ServiceSession sessionNamed(String name) {
    for (ServiceSession s : sessions.values()) {
      if (s.state != ServiceSession.State.CLONED_READ_ONLY
          && s.config.getUniqueSessionName().equals(name)) {
        return s;
      }
    }
    return null;
  }

  /** The session a consumer of that uid detached with that key, or null. */
  ServiceSession detachedSession(int uid, String key) {
    for (ServiceSession s : sessions.values()) {
      if (s.consumerUid == uid && key.equals(s.detachKey)) {
        return s;
      }
    }
    return null;
  }

  long nextFlushRequestId() {
    return ++lastFlushRequestId;
  }

  // ---------------------------------------------------------------------------------------------
  // Buffers

  /** Adds a trace buffer under the next free id, which it returns. */
  int addBuffer(TraceBuffer buffer) {
    lastBufferId = nextFreeId(lastBufferId, buffers);
    buffers.put(lastBufferId, buffer);
    return lastBufferId;
  }

  /** The buffer of that id, or null. */
  TraceBuffer buffer(int id) {
    return buffers.get(id);
  }

  /** Forgets the buffer of that id and returns it (for the caller to close), or null. */
  TraceBuffer removeBuffer(int id) {
    return buffers.remove(id);
  }

  int bufferCount() {
    return buffers.size();
  }

  /** Whether n more buffers fit in the id space. */
  boolean hasIdsForBuffers(int n) {
    return buffers.size() + (long) n <= MAX_ID;
  }

  /** Every live buffer (clones' included). */
  Collection<TraceBuffer> buffers() {
    return Collections.unmodifiableCollection(buffers.values());
  }

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
