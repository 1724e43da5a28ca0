package org.jperfetto.producer;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;

/**
 * Startup tracing (upstream's {@code SetupStartupTracingBlocking}): instances of the producer's
 * data sources started before it connects, on its own SMB, until a session of the service adopts
 * each or startup tracing is aborted ({@link #start}, {@link #adopt}, {@link #abort}; producer
 * thread).
 *
 * <p>The bookkeeping behind them on the SMB is upstream's target buffer reservations: data
 * sources started before the service knows of them write with a placeholder target buffer,
 * {@code reservation << 16}; their commits and writer registrations are held back until the
 * service starts a matching data source, whose real target buffer then replaces the placeholder
 * (binding), or until startup tracing is aborted (bound to buffer 0, which the service discards
 * and frees).
 *
 * <p>Sits between the SMB's arbiter and the connection as the arbiter's {@link
 * SharedMemoryArbiter.CommitSink}: before a connection exists, nothing goes anywhere.
 */
final class StartupTracing implements SharedMemoryArbiter.CommitSink {
  private static final System.Logger LOG = System.getLogger(StartupTracing.class.getName());
  /** Placeholder bound to this: the service has no buffer 0, so it drops the chunks and frees them. */
  static final int ABORTED = 0;
  private static final int UNBOUND = -1;

  private final Object lock = new Object();
  /** placeholder target -> bound target buffer, or UNBOUND. Guarded by lock. */
  private final Map<Integer, Integer> reservations = new HashMap<>();
  /** Writers created with a placeholder, not yet registered: writer id -> placeholder. Guarded by lock. */
  private final Map<Integer, Integer> deferredWriters = new HashMap<>();
  /** Commit entries of unbound placeholders, oldest first. Guarded by lock. */
  private CommitBatch held = new CommitBatch();
  private int lastReservation;
  private volatile SharedMemoryArbiter.CommitSink connection;

  // The startup instances and the SMB they write into: producer thread.
  private final String producerName;
  private final List<Instance> instances = new ArrayList<>();
  private ProvidedSmb smb;
  private SharedMemoryArbiter arbiter;
  private volatile int pending;

  /** One startup instance: started before any session, adopted by one or aborted. */
  private static final class Instance {
    final ActiveInstance<?> active;
    final int placeholder;
    final DataSourceConfig config;
    boolean adopted;
    boolean aborted;

    Instance(ActiveInstance<?> active, int placeholder, DataSourceConfig config) {
      this.active = active;
      this.placeholder = placeholder;
      this.config = config;
    }
  }

  /** Reservations only, with no instances or SMB of its own (tests of the bookkeeping). */
  StartupTracing() {
    this("");
  }

  private StartupTracing(String producerName) {
    this.producerName = producerName;
  }

  /**
   * Starts on smb an instance of each data source config lists (of every data source
   * dataSourcesNamed gives for the name: a session later sets up one instance per registration),
   * each writing with its own placeholder target buffer; newArbiter makes smb's arbiter for a sink.
   */
  static StartupTracing start(String producerName, TraceConfig config,
      Function<String, List<DataSource<?>>> dataSourcesNamed, ProvidedSmb smb,
      Function<SharedMemoryArbiter.CommitSink, SharedMemoryArbiter> newArbiter) {
    StartupTracing st = new StartupTracing(producerName);
    st.smb = smb;
    st.arbiter = newArbiter.apply(st);
    long localId = 0;
    for (TraceConfig.DataSource d : config.getDataSourcesList()) {
      for (DataSource<?> ds : dataSourcesNamed.apply(d.getConfig().getName())) {
        st.startInstance(ds, --localId, d.getConfig());
      }
    }
    st.pending = st.instances.size();
    LOG.log(Level.DEBUG, () -> "producer " + producerName + ": startup tracing with "
        + st.instances.size() + " instances");
    return st;
  }

  /** One startup instance of ds, under a negative local id (the service's ids are positive). */
  private void startInstance(DataSource<?> ds, long localId, DataSourceConfig config) {
    int placeholder = reserve();
    ActiveInstance<?> a = ActiveInstance.setUp(ds, localId,
        config.toBuilder().setTargetBuffer(placeholder).build(), arbiter);
    if (a == null) {
      bind(placeholder, ABORTED);
      return;
    }
    a.start(arbiter);
    a.startedEarly = true;
    instances.add(new Instance(a, placeholder, config));
  }

  /** The SMB the startup instances write into, for the first connection to offer; then null. */
  ProvidedSmb takeSmb() {
    ProvidedSmb s = smb;
    smb = null;
    return s;
  }

  /** The arbiter of the startup SMB, which the connection that took it goes on using. */
  SharedMemoryArbiter arbiter() {
    return arbiter;
  }

  /** Startup instances still waiting for a session; any thread. */
  int pending() {
    return pending;
  }

  /**
   * A session's setup_data_source: the startup instance that traces what config asks for, now
   * bound to the session's target buffer; null if none waits for it.
   */
  ActiveInstance<?> adopt(DataSourceConfig config) {
    for (Instance s : instances) {
      if (!s.adopted && !s.aborted && sameRequest(s.config, config)) {
        s.adopted = true;
        pending--;
        bind(s.placeholder, config.getTargetBuffer());
        return s.active;
      }
    }
    return null;
  }

  /**
   * Stops the startup instances no session adopted; what they wrote goes nowhere.
   *
   * @return whether any was still waiting (the held commits then want a drain)
   */
  boolean abort(String why) {
    boolean any = false;
    for (Instance s : instances) {
      if (s.adopted || s.aborted) {
        continue;
      }
      s.aborted = true;
      any = true;
      s.active.stop(() -> { });
      s.active.release();
      bind(s.placeholder, ABORTED);
    }
    if (any) {
      pending = 0;
      LOG.log(Level.INFO, "producer " + producerName + ": startup tracing aborted: " + why);
    }
    return any;
  }

  static boolean isPlaceholder(int targetBuffer) {
    return (targetBuffer >>> 16) != 0;
  }

  /** A new unbound reservation; its placeholder target buffer. */
  int reserve() {
    synchronized (lock) {
      int id = ++lastReservation;
      if (id > 0xFFFF) {
        throw new IllegalStateException("startup target buffer reservations exhausted: " + id);
      }
      int placeholder = id << 16;
      reservations.put(placeholder, UNBOUND);
      return placeholder;
    }
  }

  /** Where commits and registrations go from now on (the connection that adopted the SMB). */
  void connect(SharedMemoryArbiter.CommitSink sink) {
    connection = sink;
  }

  /**
   * Binds placeholder to targetBuffer ({@link #ABORTED} to drop what it holds); the writers created
   * for it are registered now. Returns false if it was bound already.
   */
  boolean bind(int placeholder, int targetBuffer) {
    Map<Integer, Integer> toRegister = new HashMap<>();
    synchronized (lock) {
      Integer was = reservations.get(placeholder);
      if (was == null || was != UNBOUND) {
        return false;
      }
      reservations.put(placeholder, targetBuffer);
      deferredWriters.entrySet().removeIf(e -> {
        if (e.getValue() == placeholder) {
          toRegister.put(e.getKey(), targetBuffer);
          return true;
        }
        return false;
      });
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null && targetBuffer != ABORTED) {
      toRegister.forEach(c::registerTraceWriter);
    }
    return true;
  }

  /** Whether placeholder is still waiting for its session. */
  boolean isUnbound(int placeholder) {
    synchronized (lock) {
      Integer t = reservations.get(placeholder);
      return t != null && t == UNBOUND;
    }
  }

  @Override
  public void commitPending() {
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null) {
      c.commitPending();
    }
  }

  @Override
  public void registerTraceWriter(int writerId, int targetBuffer) {
    int target = targetBuffer;
    synchronized (lock) {
      if (isPlaceholder(targetBuffer)) {
        Integer bound = reservations.get(targetBuffer);
        if (bound == null || bound == UNBOUND) {
          deferredWriters.put(writerId, targetBuffer);
          return;
        }
        target = bound;
      }
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null && target != ABORTED) {
      c.registerTraceWriter(writerId, target);
    }
  }

  @Override
  public void unregisterTraceWriter(int writerId) {
    synchronized (lock) {
      if (deferredWriters.remove(writerId) != null) {
        return; // never registered
      }
    }
    SharedMemoryArbiter.CommitSink c = connection;
    if (c != null) {
      c.unregisterTraceWriter(writerId);
    }
  }

  /**
   * Rewrites batch (just drained from the arbiter) for sending: entries held before whose
   * placeholder is bound now go first, bound placeholders become their target buffers, and
   * entries of unbound placeholders are held back. The flush ack stays in batch.
   */
  void resolve(CommitBatch batch) {
    synchronized (lock) {
      if (held.moves == 0 && held.patches == 0 && !hasPlaceholder(batch)) {
        return;
      }
      CommitBatch out = new CommitBatch();
      CommitBatch stillHeld = new CommitBatch();
      split(held, out, stillHeld);
      split(batch, out, stillHeld);
      long flushAck = batch.flushRequestId;
      held = stillHeld;
      batch.clear();
      batch.appendFrom(out);
      batch.flushRequestId = flushAck;
    }
  }

  private static boolean hasPlaceholder(CommitBatch b) {
    for (int i = 0; i < b.moves; i++) {
      if (isPlaceholder(b.moveTargetBuffer[i])) {
        return true;
      }
    }
    for (int i = 0; i < b.patches; i++) {
      if (isPlaceholder(b.patchTargetBuffer[i])) {
        return true;
      }
    }
    return false;
  }

  /** Entries of from go to send (placeholders replaced) or, if unbound, to hold. Lock held. */
  private void split(CommitBatch from, CommitBatch send, CommitBatch hold) {
    for (int i = 0; i < from.moves; i++) {
      int t = from.moveTargetBuffer[i];
      int bound = isPlaceholder(t) ? reservations.getOrDefault(t, ABORTED) : t;
      CommitBatch to = bound == UNBOUND ? hold : send;
      to.addMove(from.movePage[i], from.moveChunk[i], bound == UNBOUND ? t : bound, 0);
    }
    for (int i = 0; i < from.patches; i++) {
      int t = from.patchTargetBuffer[i];
      int bound = isPlaceholder(t) ? reservations.getOrDefault(t, ABORTED) : t;
      CommitBatch to = bound == UNBOUND ? hold : send;
      to.addPatch(from.patchWriterId[i], from.patchChunkId[i], bound == UNBOUND ? t : bound,
          from.patchOffset[i], from.patchData[i]);
      to.patchHasMore[to.patches - 1] = from.patchHasMore[i];
    }
  }

  /**
   * Whether a service session's data source config asks for what a startup instance traces: the
   * same config once the fields the service fills in are left out.
   */
  static boolean sameRequest(DataSourceConfig startup, DataSourceConfig fromService) {
    return comparable(startup).equals(comparable(fromService));
  }

  private static DataSourceConfig comparable(DataSourceConfig c) {
    return c.toBuilder().clearTargetBuffer().clearTracingSessionId().clearTraceDurationMs()
        .clearStopTimeoutMs().clearEnableExtraGuardrails().clearPreferSuspendClockForDuration()
        .clearSessionInitiator().build();
  }
}
