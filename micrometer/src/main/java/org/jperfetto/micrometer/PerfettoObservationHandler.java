package org.jperfetto.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.SpanRecorder;
import org.jperfetto.producer.track.TrackEvent;

/**
 * Micrometer Observations on the Perfetto timeline: each Observation that a tracing session sees
 * start and stop becomes a TrackEvent slice of the category {@value #CATEGORY}, beside the JVM's and
 * the kernel's events in the same trace (docs/micrometer.md).
 *
 * <pre>{@code
 * PerfettoObservationHandler perfetto = PerfettoObservationHandler.connect("my-service");
 * registry.observationConfig().observationHandler(perfetto);
 * }</pre>
 *
 * <p>What a slice holds: its name is the observation's contextual name if set, else its name (then
 * the name is the argument {@value ObservationRecord#NAME_ARG}); low and high cardinality key values
 * are debug arguments (at most {@value ObservationRecord#MAX_KEY_VALUES}, the rest counted in
 * {@value ObservationRecord#DROPPED_KEY_VALUES_ARG}); a failed observation has {@code error = true},
 * {@value ObservationRecord#EXCEPTION_ARG} (the exception's class and message) and an instant
 * {@value SpanRecorder#ERROR_INSTANT} at its end; its events are instants at the time they were
 * signalled. An observation that started and stopped on one thread is a slice on that thread's
 * track, nested by time with its other slices; any other goes on the process's tracks named
 * {@value #ASYNC_TRACK} ({@link SpanRecorder}). A parent whose child runs on another thread (or ends
 * on one) is linked to it by a flow. Observations still running when the session stops are closed at
 * the stop and marked {@value ObservationRecord#UNFINISHED_ARG}.
 *
 * <p>The handler writes a slice only once its observation stops, so it sees observations that
 * started while a session recorded {@value #CATEGORY}. With no such session, each callback is a
 * volatile load and a branch, and allocates nothing.
 *
 * <p>The handler has its own {@link TrackEvent} (process-wide, one per handler): register its
 * {@link #dataSource()} with a {@link TracingProducer}, or let {@link #connect} make the producer.
 */
public final class PerfettoObservationHandler implements ObservationHandler<Observation.Context>, AutoCloseable {
  /** The TrackEvent category of every slice the handler writes. */
  public static final String CATEGORY = "micrometer";
  /** The name of the tracks of observations that did not start and stop on one thread. */
  public static final String ASYNC_TRACK = "Observations";
  /**
   * Observations recorded and not stopped, at most: beyond it (observations that are never stopped,
   * piling up), new ones are not recorded but counted ({@link #dropped()}).
   */
  public static final int MAX_OPEN = 1 << 16;

  private final Category category = Category.described(CATEGORY, "Micrometer Observations (jperfetto-micrometer)");
  private final TrackEvent trackEvent;
  private final SpanRecorder recorder;
  private final TracingProducer producer;
  /** Records made and not yet stopped nor closed at a session's stop. */
  private final Set<ObservationRecord> open = ConcurrentHashMap.newKeySet();
  /** The size of {@link #open}, read first by every callback: 0 means there is nothing to look up. */
  private final AtomicInteger openCount = new AtomicInteger();
  private final AtomicLong dropped = new AtomicLong();
  private final int maxOpen;

  private PerfettoObservationHandler(TracingProducer.Builder producer) {
    this(producer, MAX_OPEN);
  }

  /** A handler keeping at most maxOpen observations open (tests lower it). */
  PerfettoObservationHandler(TracingProducer.Builder producer, int maxOpen) {
    this.maxOpen = maxOpen;
    this.trackEvent = TrackEvent.builder().categories(category).onSessionStopping(this::closeUnfinished).build();
    this.recorder = new SpanRecorder(trackEvent, category, ASYNC_TRACK);
    this.producer = producer == null ? null : producer.dataSource(trackEvent.dataSource()).start();
  }

  /**
   * A handler whose {@link #dataSource()} the caller registers with a producer of its own (for
   * example with {@code InProcessTracing.start(TracingProducer.builder(name).dataSource(...))}).
   */
  public static PerfettoObservationHandler create() {
    return new PerfettoObservationHandler(null);
  }

  /**
   * A handler connected to the system tracing service (jtraced, or upstream's traced) as a producer
   * named producerName, on the usual sockets ({@code PERFETTO_PRODUCER_SOCK_NAME}, else the default
   * path). It connects in the background and reconnects when the service restarts; {@link #close()}
   * disconnects.
   */
  public static PerfettoObservationHandler connect(String producerName) {
    return connect(TracingProducer.builder(Objects.requireNonNull(producerName, "producerName")));
  }

  /**
   * A handler connected as the producer that producer describes (its socket, its shared memory
   * size, other data sources), which gets the handler's {@link #dataSource()} and is started here;
   * {@link #close()} closes it.
   */
  public static PerfettoObservationHandler connect(TracingProducer.Builder producer) {
    return new PerfettoObservationHandler(Objects.requireNonNull(producer, "producer"));
  }

  /** The "track_event" data source carrying the handler's slices, to register with a producer. */
  public DataSource<?> dataSource() {
    return trackEvent.dataSource();
  }

  /** The category {@value #CATEGORY}; {@link Category#isEnabled()} says whether a session records it. */
  public Category category() {
    return category;
  }

  /**
   * Observations not recorded: started while {@link #MAX_OPEN} were open, or, on their async track,
   * overlapping more others than {@link SpanRecorder#MAX_LANES}.
   */
  public long dropped() {
    return dropped.get() + recorder.dropped();
  }

  @Override
  public boolean supportsContext(Observation.Context context) {
    return true;
  }

  @Override
  public void onStart(Observation.Context context) {
    if (!category.isEnabled() || context == null) {
      return;
    }
    if (openCount.incrementAndGet() > maxOpen) {
      openCount.decrementAndGet();
      dropped.incrementAndGet();
      return;
    }
    Thread current = Thread.currentThread();
    ObservationRecord record = new ObservationRecord(context, System.nanoTime(), current);
    ObservationRecord parent = parentOf(context);
    if (parent != null && parent.startThread() != current) {
      record.linkToParent(parent);
    }
    open.add(record);
    context.put(ObservationRecord.KEY, record);
  }

  @Override
  public void onEvent(Observation.Event event, Observation.Context context) {
    if (openCount.get() == 0 || event == null || context == null) {
      return;
    }
    ObservationRecord record = context.get(ObservationRecord.KEY);
    if (record != null) {
      record.addEvent(event, System.nanoTime());
    }
  }

  @Override
  public void onStop(Observation.Context context) {
    if (openCount.get() == 0 || context == null) {
      return;
    }
    ObservationRecord record = context.get(ObservationRecord.KEY);
    if (record == null) {
      return;
    }
    long end = System.nanoTime();
    context.remove(ObservationRecord.KEY);
    forget(record);
    if (record.startThread() != Thread.currentThread()) {
      ObservationRecord parent = parentOf(context);
      if (parent != null) {
        record.linkToParent(parent); // it runs on a track of its own: worth an arrow
      }
    }
    if (record.tryFinish(end, false)) {
      recorder.record(record);
    }
  }

  /**
   * Closes every observation still running, as ended now and marked unfinished: called on the
   * producer's thread as a session stops, while its categories are still on (so the slices reach
   * it; they go on the async tracks, the producer's thread being none of theirs).
   */
  private void closeUnfinished() {
    long now = System.nanoTime();
    for (ObservationRecord record : open) {
      forget(record);
      if (record.tryFinish(now, true)) {
        recorder.record(record);
      }
    }
  }

  private void forget(ObservationRecord record) {
    if (open.remove(record)) {
      openCount.decrementAndGet();
    }
  }

  private static ObservationRecord parentOf(Observation.Context context) {
    ObservationView parent = context.getParentObservation();
    Observation.ContextView view = parent == null ? null : parent.getContextView();
    return view == null ? null : view.get(ObservationRecord.KEY);
  }

  /** Disconnects the producer {@link #connect} made, if any. */
  @Override
  public void close() {
    if (producer != null) {
      producer.close();
    }
  }
}
