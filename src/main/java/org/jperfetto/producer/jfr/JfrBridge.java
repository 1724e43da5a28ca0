package org.jperfetto.producer.jfr;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.producer.TraceWriter;

/**
 * One running {@code jvm.jfr} instance: a JFR RecordingStream in this JVM whose events are mapped
 * ({@link JfrEventMapper}), moved onto the trace clock ({@link JfrClock}) and written
 * ({@link JvmTrackEncoder}) by the stream's own thread, through the data source's writer for
 * that thread.
 *
 * <p>Draining. JFR hands events to the stream about once a second. {@link #flush} and {@link #stop}
 * commit a {@link ClockMark} carrying a sequence number and wait until the stream has dispatched
 * the JFR flush segment holding that mark: JFR writes every event committed before the mark into
 * that segment or an earlier one, so everything JFR had before the request is in the trace (and
 * committed to the service) before the flush is acknowledged or the stop reported.
 */
public final class JfrBridge {
  private static final Logger LOG = System.getLogger(JfrBridge.class.getName());
  /** Events held while the clock waits for its first mark; beyond this they are dropped. */
  static final int MAX_PENDING = 100_000;

  private static final java.util.concurrent.atomic.AtomicLong IDS = new java.util.concurrent.atomic.AtomicLong();

  private final long id = IDS.incrementAndGet();
  private final JfrConfig config;
  private final DataSource<JfrBridge> dataSource;
  private final DataSourceInstance<JfrBridge> instance;
  private final JfrEventMapper mapper;
  private final JvmTrackEncoder encoder;
  private final JfrClock clock = new JfrClock();
  private final List<JvmEvent> pending = new ArrayList<>();
  private RecordingStream stream;
  private boolean stopping;
  private volatile TraceWriter lastWriter;
  private int seenGeneration;

  // Stream thread writes, others wait: guarded by this.
  private long requestedMark;
  private long seenMark;
  private long drainedMark;
  private volatile long eventsWritten;
  private volatile long eventsDropped;
  private volatile long eventsFailed;

  JfrBridge(JfrConfig config, DataSource<JfrBridge> dataSource, DataSourceInstance<JfrBridge> instance) {
    this.config = config;
    this.dataSource = dataSource;
    this.instance = instance;
    this.mapper = new JfrEventMapper(config);
    this.encoder = new JvmTrackEncoder((int) ProcessHandle.current().pid());
  }

  public JfrConfig config() {
    return config;
  }

  public JfrClock clock() {
    return clock;
  }

  /** JvmEvents written so far. */
  public long eventsWritten() {
    return eventsWritten;
  }

  /** JvmEvents lost (mapped before the clock was calibrated and over {@link #MAX_PENDING}). */
  public long eventsDropped() {
    return eventsDropped;
  }

  /** JFR events that could not be mapped or written (logged once). */
  public long eventsFailed() {
    return eventsFailed;
  }

  /** Starts the recording stream. */
  synchronized void start() {
    if (stream != null) {
      return;
    }
    RecordingStream rs = new RecordingStream();
    rs.setSettings(config.settings());
    rs.enable(ClockMark.class).withThreshold(Duration.ZERO).withoutStackTrace();
    rs.onEvent(this::onEvent);
    rs.onFlush(this::onStreamFlush);
    rs.onError(t -> LOG.log(Level.WARNING, "jvm.jfr: recording stream failed", t));
    rs.startAsync();
    stream = rs;
    ClockMark.emit(id, nextMark());
    LOG.log(Level.DEBUG, () -> "jvm.jfr: recording started for " + instance + " with " + config.settings().size() + " settings");
  }

  /**
   * Waits (at most timeout) until everything JFR recorded before this call is written and handed
   * to the service. Returns false on timeout.
   */
  boolean flush(Duration timeout) throws InterruptedException {
    synchronized (this) {
      if (stream == null || stopping) {
        return true; // nothing recorded, or the stop drains it
      }
    }
    long mark = nextMark();
    ClockMark.emit(id, mark);
    return awaitDrained(mark, timeout);
  }

  /** Drains what JFR recorded before now, stops and closes the stream, commits the last chunk. */
  void stop(Duration timeout) {
    RecordingStream rs;
    synchronized (this) {
      rs = stream;
      if (rs == null || stopping) {
        return; // not started, or stopped already (a stop, then the producer disconnecting)
      }
      stopping = true;
    }
    try {
      long mark = nextMark();
      ClockMark.emit(id, mark);
      if (!awaitDrained(mark, timeout)) {
        LOG.log(Level.WARNING, "jvm.jfr: stream did not drain within " + timeout.toMillis() + " ms; stopping anyway");
      }
      rs.stop(); // dispatches what is left, then returns once the stream thread is done with it
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      rs.close();
      TraceWriter w = lastWriter; // the stream thread has finished with it (and is gone)
      if (w != null) {
        w.close(); // commits the last chunk and gives the writer id back
      }
    }
    LOG.log(Level.DEBUG, () -> "jvm.jfr: stopped " + instance + ": events=" + eventsWritten
        + " dropped=" + eventsDropped + " clock offset=" + clock.offset() + " +-" + clock.uncertaintyNanos()
        + " ns, steps=" + clock.steps());
  }

  private synchronized long nextMark() {
    return ++requestedMark;
  }

  private synchronized boolean awaitDrained(long mark, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (drainedMark < mark) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }

  // ---- stream thread ----

  private void onEvent(RecordedEvent e) {
    try {
      handle(e);
    } catch (RuntimeException ex) {
      // One odd event (a field of another type in another JDK) must not end the stream.
      if (eventsFailed++ == 0) {
        LOG.log(Level.WARNING, "jvm.jfr: could not map " + e.getEventType().getName() + "; skipping such events", ex);
      }
    }
  }

  private void handle(RecordedEvent e) {
    if (e.getEventType().getName().equals(ClockMark.NAME)) {
      clock.mark(JfrEventMapper.epochNanos(e.getStartTime()), e.getLong("monotonicBefore"), e.getLong("monotonicAfter"));
      if (e.getLong("bridge") == id) {
        long seq = e.getLong("sequence");
        synchronized (this) {
          seenMark = Math.max(seenMark, seq);
        }
      }
      if (!pending.isEmpty()) {
        List<JvmEvent> held = new ArrayList<>(pending);
        pending.clear();
        write(held);
      }
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
    write(mapped);
  }

  private void write(List<JvmEvent> events) {
    dataSource.trace(ctx -> {
      if (ctx.instance() != instance) {
        return;
      }
      lastWriter = ctx.writer();
      int generation = instance.incrementalStateGeneration();
      if (generation != seenGeneration) {
        seenGeneration = generation;
        encoder.clearIncrementalState();
      }
      for (JvmEvent ev : events) {
        encoder.write(ev, clock, ctx::newTracePacket);
      }
    });
    eventsWritten += events.size();
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
    synchronized (this) {
      drainedMark = seenMark;
      notifyAll();
    }
    ClockMark.emit(id, 0); // a mark per JFR flush keeps checking the clock for drift
  }
}
