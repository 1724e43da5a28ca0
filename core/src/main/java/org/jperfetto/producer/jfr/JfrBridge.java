package org.jperfetto.producer.jfr;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.EventStream;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceHandler;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.producer.TraceWriter;

/**
 * One running {@code jvm.jfr} instance: a JFR event stream of this JVM or another one
 * ({@link JfrSource}) whose events are mapped ({@link JfrEventMapper}), moved onto the trace clock
 * ({@link JfrClock}) and written ({@link JvmTrackEncoder}) by the stream's own thread, through the
 * data source's writer for that thread.
 *
 * <p>Draining. JFR hands events to the stream about once a second. {@link #flush} and {@link #stop}
 * commit a {@link ClockMark} carrying a sequence number; the flush is acknowledged, and the stop
 * reported, once the stream has dispatched the JFR flush segment holding that mark: JFR writes
 * every event committed before the mark into that segment or an earlier one, so everything JFR had
 * before the request is in the trace (and committed to the service) first. Neither blocks the
 * producer's thread: it sends the commits the stream thread's writing produces, so a flush that
 * waited on it would stall the stream on a full shared memory buffer (a deadlock until the timeout).
 *
 * <p>Another JVM's recording cannot hold our marks: there the clock is related through the wall
 * clock ({@link RemoteJfr}), and a flush is acknowledged once the stream dispatched an event that
 * ended after the request, or after {@link #REMOTE_FLUSHES} stream flushes (an idle target), or at
 * the timeout.
 */
final class JfrBridge {
  private static final Logger LOG = System.getLogger(JfrBridge.class.getName());
  /** Events held while the clock waits for its first mark; beyond this they are dropped. */
  static final int MAX_PENDING = 100_000;
  /**
   * Stream flushes after which a flush of another JVM's stream is acknowledged though no later
   * event came: that JVM writes its data each second and the download polls each second.
   */
  static final int REMOTE_FLUSHES = 3;

  private static final java.util.concurrent.atomic.AtomicLong IDS = new java.util.concurrent.atomic.AtomicLong();
  private static final java.util.concurrent.atomic.AtomicBoolean SAID_NO_CPU_SAMPLER =
      new java.util.concurrent.atomic.AtomicBoolean();
  private static final java.util.concurrent.atomic.AtomicBoolean SAID_NO_SAMPLES =
      new java.util.concurrent.atomic.AtomicBoolean();

  private final long id = IDS.incrementAndGet();
  private final JfrSource source;
  private final JfrConfig config;
  private final DataSource<JfrBridge> dataSource;
  private final DataSourceInstance<JfrBridge> instance;
  private final JfrEventMapper mapper;
  private final JvmTrackEncoder encoder;
  private final JfrClock clock = new JfrClock();
  private final List<JvmEvent> pending = new ArrayList<>();
  /**
   * Stack samples held, like {@link #pending}, until the clock is calibrated: what they say, not
   * the RecordedEvent, which the stream reuses for a later event.
   */
  private final List<PendingSample> pendingSamples = new ArrayList<>();
  /** Writes the stack samples; null when the config or this JVM has none. Set before the stream starts. */
  private StackSampleEncoder sampleEncoder;
  /** Whether the samples group is on (the encoder may exist for allocation stacks alone). */
  private boolean samplesOn;
  // The sample being written: fields, not captured, so that writing one allocates nothing.
  private long sampleNanos;
  private RecordedThread sampleThread;
  private RecordedStackTrace sampleStack;
  private boolean sampleInNative;
  private final DataSource.TraceFunction<JfrBridge> writeSample = this::writeSample;
  private volatile long samplesWritten;
  private Thread starter;
  private EventStream stream;
  private boolean stopping;
  private volatile TraceWriter lastWriter;
  private int seenGeneration;

  // Shared by the stream thread and the flushing/stopping threads: guarded by this.
  private long requestedMark;
  private long seenMark;
  /** Flushes waiting for their mark to be dispatched, by mark. */
  private final NavigableMap<Long, DataSourceHandler.FlushHandle> flushes = new TreeMap<>();
  /** Another JVM's stream: the marks of pending flushes, with when they were asked for. */
  private final NavigableMap<Long, RemoteFlush> remoteFlushes = new TreeMap<>();
  /** Stream flushes dispatched (stream thread writes). */
  private volatile long streamFlushes;
  /** The latest end of an event dispatched, JFR time (epoch ns; stream thread). */
  private long latestEventEpochNanos = Long.MIN_VALUE;
  private volatile long eventsWritten;
  private volatile long eventsDropped;
  private volatile long eventsFailed;

  /** A stack sample taken at epochNanos (JFR time), held until the clock is calibrated. */
  private record PendingSample(long epochNanos, RecordedThread thread, RecordedStackTrace stack, boolean inNative) {}

  /** A flush of another JVM's stream: asked for at System.nanoTime requestedNanos, after that many stream flushes. */
  private record RemoteFlush(long requestedNanos, long streamFlushes) {}

  JfrBridge(JfrSource source, JfrConfig config, DataSource<JfrBridge> dataSource,
      DataSourceInstance<JfrBridge> instance) {
    this.source = source;
    this.config = config;
    this.dataSource = dataSource;
    this.instance = instance;
    this.mapper = new JfrEventMapper(config);
    this.encoder = new JvmTrackEncoder(source.pid());
  }

  /** The config of the instance this bridge records for. */
  public JfrConfig config() {
    return config;
  }

  /** The JFR-to-CLOCK_MONOTONIC mapping this bridge uses. */
  public JfrClock clock() {
    return clock;
  }

  /** Whether the JFR stream runs: set shortly after start (which is asynchronous), cleared never. */
  public synchronized boolean isRecording() {
    return stream != null;
  }

  /** JvmEvents written so far. */
  public long eventsWritten() {
    return eventsWritten;
  }

  /** Java stack samples written. */
  public long samplesWritten() {
    return samplesWritten;
  }

  /** The stack sample encoder of the running stream (null before it started, or without samples). */
  StackSampleEncoder sampleEncoder() {
    return sampleEncoder;
  }

  /** JvmEvents lost (mapped before the clock was calibrated and over {@link #MAX_PENDING}). */
  public long eventsDropped() {
    return eventsDropped;
  }

  /** JFR events that could not be mapped or written (logged once). */
  public long eventsFailed() {
    return eventsFailed;
  }

  /**
   * Starts the recording stream on a helper thread and returns at once: the first RecordingStream
   * of a JVM costs JFR's initialisation (half a second to two on this machine), which must not hold
   * up the producer's thread and with it every writer's commits. JFR records from the moment the
   * stream has started; flushes before that have nothing of it to wait for.
   */
  synchronized void start() {
    if (starter != null) {
      return;
    }
    starter = Thread.ofPlatform().daemon().name("jvm.jfr start " + instance.instanceId()).start(this::startStream);
  }

  private void startStream() {
    EventStream rs;
    try {
      JfrConfig effective = withAvailableSampler(config, source.eventTypes());
      boolean allocationStacks = effective.has(EventGroup.ALLOCATION) && effective.stackDepth() > 0;
      samplesOn = effective.has(EventGroup.SAMPLES);
      if (effective.has(EventGroup.SAMPLES) || allocationStacks) {
        JfrConfig.Sampling sampling = effective.sampling();
        sampleEncoder = new StackSampleEncoder(source.pid(), sampling.depth(),
            effective.has(EventGroup.SAMPLES) && sampling.sampler() == JfrConfig.Sampler.CPU, encoder);
      }
      rs = source.open(effective.settings());
      rs.onEvent(this::onEvent);
      rs.onFlush(this::onStreamFlush);
      rs.onError(t -> LOG.log(Level.WARNING, "jvm.jfr: recording stream failed", t));
    } catch (RuntimeException | java.io.IOException e) {
      LOG.log(Level.ERROR, "jvm.jfr: could not create the recording stream of " + instance + " (" + source + ")", e);
      return;
    }
    synchronized (this) {
      if (stopping) {
        rs.close();
        return;
      }
      if (!source.marksClock()) {
        markWallClock(); // before the stream thread starts, which owns the clock from then on
      }
      rs.startAsync();
      stream = rs;
    }
    if (source.marksClock()) {
      ClockMark.emit(id, nextMark());
    }
    LOG.log(Level.DEBUG, () -> "jvm.jfr: recording started for " + instance + " with "
        + config.settings().size() + " settings");
  }

  /**
   * config with the sampler this JVM has: the CPU-time sampler only where JFR offers it (else the
   * wall-clock one), and no samples group at all when JFR has no execution sampler (said once).
   */
  static JfrConfig withAvailableSampler(JfrConfig config, java.util.Set<String> types) {
    if (!config.has(EventGroup.SAMPLES)) {
      return config;
    }
    JfrConfig c = config;
    if (c.sampling().sampler() == JfrConfig.Sampler.CPU && !types.containsAll(JfrConfig.Sampler.CPU.eventTypes())) {
      if (!SAID_NO_CPU_SAMPLER.getAndSet(true)) {
        LOG.log(Level.INFO, "jvm.jfr: this JVM has no CPU-time sampler (jdk.CPUTimeSample: JDK 25+ on Linux);"
            + " Java stack samples by wall clock instead");
      }
      c = c.withSampling(c.sampling().withSampler(JfrConfig.Sampler.WALL));
    }
    if (!types.containsAll(c.sampling().sampler().eventTypes())) {
      if (!SAID_NO_SAMPLES.getAndSet(true)) {
        LOG.log(Level.WARNING, "jvm.jfr: Java stack samples unavailable: this JVM's JFR has no "
            + c.sampling().sampler().eventTypes() + "; recording the other events");
      }
      java.util.EnumSet<EventGroup> groups = java.util.EnumSet.copyOf(c.groups());
      groups.remove(EventGroup.SAMPLES);
      c = c.withGroups(groups);
    }
    return c;
  }

  /**
   * Calls {@code done} once everything JFR recorded before this call is written and handed to the
   * service, or after {@code timeout} (logged). Does not wait: the caller is the producer's thread,
   * which must stay free to send the commits the drain produces.
   */
  void flush(DataSourceHandler.FlushHandle done, Duration timeout) {
    long mark;
    synchronized (this) {
      if (stream == null || stopping) {
        mark = 0; // nothing recorded, or the stop drains it
      } else {
        mark = nextMark();
        flushes.put(mark, done);
        if (!source.marksClock()) {
          remoteFlushes.put(mark, new RemoteFlush(System.nanoTime(), streamFlushes));
        }
      }
    }
    if (mark == 0) {
      done.done();
      return;
    }
    if (source.marksClock()) {
      ClockMark.emit(id, mark);
    }
    CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS).execute(() -> {
      DataSourceHandler.FlushHandle late;
      synchronized (this) {
        late = flushes.remove(mark);
      }
      if (late != null) {
        LOG.log(Level.WARNING, "jvm.jfr: flush of " + instance + " acknowledged before JFR drained ("
            + timeout.toMillis() + " ms)");
        late.done();
      }
    });
  }

  /** Stops the stream once it dispatched all JFR recorded before now, closes it, commits the last chunk. */
  void stop() {
    Thread startedBy;
    synchronized (this) {
      if (starter == null || stopping) {
        return; // not started, or stopped already (a stop, then the producer disconnecting)
      }
      stopping = true;
      startedBy = starter;
    }
    try {
      startedBy.join(); // a stream it makes from now on is closed unstarted (stopping is set)
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    EventStream rs;
    synchronized (this) {
      rs = stream;
    }
    if (rs == null) {
      completeFlushes(Long.MAX_VALUE);
      return;
    }
    try {
      source.stop(rs); // no separate drain first: the stop dispatches the recording's last flush
    } catch (IllegalStateException e) {
      // JFR's shutdown hook stopped every recording first (the JVM is exiting): nothing more comes.
      LOG.log(Level.DEBUG, () -> "jvm.jfr: recording of " + instance + " already stopped: " + e.getMessage());
    } finally {
      rs.close();
      completeFlushes(Long.MAX_VALUE); // whatever JFR had is in (or will never come)
      TraceWriter w = lastWriter; // the stream thread has finished with it (and is gone)
      if (w != null) {
        w.close(); // commits the last chunk and gives the writer id back
      }
    }
    LOG.log(Level.DEBUG, () -> "jvm.jfr: stopped " + instance + ": events=" + eventsWritten
        + " dropped=" + eventsDropped + " clock offset=" + clock.offset() + " +-" + clock.uncertaintyNanos()
        + " ns, steps=" + clock.steps());
  }

  /** Acknowledges the flushes whose marks are at most upTo. */
  private void completeFlushes(long upTo) {
    List<DataSourceHandler.FlushHandle> done = new ArrayList<>();
    synchronized (this) {
      var head = flushes.headMap(upTo, true);
      done.addAll(head.values());
      head.clear();
    }
    done.forEach(DataSourceHandler.FlushHandle::done);
  }

  private synchronized long nextMark() {
    return ++requestedMark;
  }

  // ---- stream thread ----

  private void onEvent(RecordedEvent e) {
    try {
      if (!source.marksClock()) {
        latestEventEpochNanos = Math.max(latestEventEpochNanos, JfrEventMapper.epochNanos(e.getEndTime()));
      }
      handle(e);
    } catch (RuntimeException ex) {
      // One odd event (a field of another type in another JDK) must not end the stream.
      if (eventsFailed++ == 0) {
        LOG.log(Level.WARNING, "jvm.jfr: could not map " + e.getEventType().getName() + "; skipping such events", ex);
      }
    }
  }

  private void handle(RecordedEvent e) {
    String type = e.getEventType().getName();
    switch (type) {
      // The execution and native samplers name the sampled thread; the CPU-time sampler's event
      // thread is the sampled one.
      case "jdk.ExecutionSample" -> {
        sample(e, e.getThread("sampledThread"), false);
        return;
      }
      case "jdk.NativeMethodSample" -> {
        sample(e, e.getThread("sampledThread"), true);
        return;
      }
      case "jdk.CPUTimeSample" -> {
        sample(e, e.getThread(), false);
        return;
      }
      default -> { }
    }
    if (type.equals(ClockMark.NAME)) {
      clock.mark(JfrEventMapper.epochNanos(e.getStartTime()), e.getLong("monotonicBefore"),
          e.getLong("monotonicAfter"));
      if (e.getLong("bridge") == id) {
        long seq = e.getLong("sequence");
        synchronized (this) {
          seenMark = Math.max(seenMark, seq);
        }
      }
      drainPending();
      return;
    }
    List<JvmEvent> mapped = mapper.map(e);
    if (mapped.isEmpty()) {
      return;
    }
    if (!clock.isCalibrated()) {
      if (pending.size() + mapped.size() > MAX_PENDING) {
        eventsDropped += mapped.size();
      } else {
        pending.addAll(mapped);
      }
      return;
    }
    // An allocation sample's stack goes in as an interned callstack too (the UI's flame graph of
    // an area of the Allocation lane), through the stack samples' interning.
    boolean allocation = type.equals("jdk.ObjectAllocationSample");
    write(mapped, allocation && sampleEncoder != null ? e.getStackTrace() : null);
  }

  /** Writes the events held until the clock's first mark. */
  private void drainPending() {
    if (!pending.isEmpty()) {
      List<JvmEvent> held = new ArrayList<>(pending);
      pending.clear();
      write(held, null);
    }
    if (!pendingSamples.isEmpty()) {
      List<PendingSample> held = new ArrayList<>(pendingSamples);
      pendingSamples.clear();
      for (PendingSample p : held) {
        traceSample(p.epochNanos(), p.thread(), p.stack(), p.inNative());
      }
    }
  }

  private void sample(RecordedEvent e, RecordedThread thread, boolean inNative) {
    if (sampleEncoder == null || !samplesOn) {
      return;
    }
    long epochNanos = JfrEventMapper.epochNanos(e.getStartTime());
    if (!clock.isCalibrated()) {
      if (pending.size() + pendingSamples.size() >= MAX_PENDING) {
        eventsDropped++;
      } else {
        pendingSamples.add(new PendingSample(epochNanos, thread, e.getStackTrace(), inNative));
      }
      return;
    }
    traceSample(epochNanos, thread, e.getStackTrace(), inNative);
  }

  private void traceSample(long epochNanos, RecordedThread thread, RecordedStackTrace stack, boolean inNative) {
    sampleThread = thread;
    sampleStack = stack;
    sampleInNative = inNative;
    sampleNanos = clock.toTrace(epochNanos);
    dataSource.trace(writeSample);
    sampleThread = null;
    sampleStack = null;
  }

  private void writeSample(org.jperfetto.producer.TraceContext<JfrBridge> ctx) {
    if (ctx.instance() != instance) {
      return;
    }
    lastWriter = ctx.writer();
    int generation = instance.incrementalStateGeneration();
    clearTracksOnNewGeneration(generation);
    if (sampleEncoder.write(sampleNanos, sampleThread, sampleStack, sampleInNative, ctx.writer(), generation)) {
      samplesWritten++;
    }
  }

  private void write(List<JvmEvent> events, RecordedStackTrace stack) {
    dataSource.trace(ctx -> {
      if (ctx.instance() != instance) {
        return;
      }
      lastWriter = ctx.writer();
      int generation = instance.incrementalStateGeneration();
      clearTracksOnNewGeneration(generation);
      for (JvmEvent ev : events) {
        if (stack != null && ev instanceof JvmEvent.Instant) {
          long iid = sampleEncoder.callstack(stack, clock.toTrace(ev.epochNanos()), ctx.writer(), generation);
          encoder.write(ev, clock, ctx::newTracePacket, iid, sampleEncoder::writeInterned);
        } else {
          encoder.write(ev, clock, ctx::newTracePacket);
        }
      }
    });
    eventsWritten += events.size();
  }

  /** A new incremental state generation (a clear): the tracks are described again. */
  private void clearTracksOnNewGeneration(int generation) {
    if (generation != seenGeneration) {
      seenGeneration = generation;
      encoder.clearIncrementalState();
    }
  }

  private void onStreamFlush() {
    TraceWriter w = lastWriter;
    if (w != null && dataSource.isEnabled()) {
      dataSource.trace(ctx -> {
        if (ctx.instance() == instance) {
          ctx.flush();
        }
      });
    }
    long flushesNow = ++streamFlushes; // the stream thread is the only writer
    if (!source.marksClock()) {
      markWallClock(); // a mark per JFR flush keeps checking the clock for drift
      long latest = clock.isCalibrated() && latestEventEpochNanos != Long.MIN_VALUE
          ? clock.toTrace(latestEventEpochNanos) : Long.MIN_VALUE;
      synchronized (this) {
        for (var it = remoteFlushes.entrySet().iterator(); it.hasNext(); ) {
          var f = it.next();
          if (latest < f.getValue().requestedNanos() && flushesNow - f.getValue().streamFlushes() < REMOTE_FLUSHES) {
            break;
          }
          seenMark = Math.max(seenMark, f.getKey());
          it.remove();
        }
      }
    }
    long drained;
    synchronized (this) {
      drained = seenMark; // every mark seen so far was in a segment the stream has now dispatched
    }
    completeFlushes(drained);
    if (source.marksClock()) {
      ClockMark.emit(id, 0); // a mark per JFR flush keeps checking the clock for drift
    }
  }

  /**
   * Another JVM: CLOCK_REALTIME minus CLOCK_MONOTONIC, measured here, is its JFR time minus
   * CLOCK_MONOTONIC (see {@link RemoteJfr}); fed to the clock as a mark.
   */
  private void markWallClock() {
    long before = System.nanoTime();
    java.time.Instant now = java.time.Instant.now();
    long after = System.nanoTime();
    clock.mark(JfrEventMapper.epochNanos(now), before, after);
    drainPending();
  }
}
