package org.jperfetto.producer.track;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceHandler;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TrackEventCategory;
import org.jperfetto.protos.TrackEventDescriptor;

/**
 * The TrackEvent API: slices, instants, counters, flows and debug annotations on thread, process and
 * custom tracks, recorded by the "track_event" data source in upstream Perfetto's format (interned
 * names, delta timestamps on CLOCK_MONOTONIC, track descriptors), so trace_processor and the UI read
 * them as they read the C++ SDK's.
 *
 * <pre>{@code
 * static final Category RENDER = Category.of("render");
 * static final TrackEvent TRACK = TrackEvent.builder().categories(RENDER).build();
 * // once: TracingProducer.builder("app").dataSource(TRACK.dataSource()).start();
 * try (var s = TRACK.slice(RENDER, "draw")) { ... }
 * TRACK.instant(RENDER, "vsync", "frame", frameNo);
 * }</pre>
 *
 * <p>Every method first checks the category: when no session records it the call is a volatile load
 * and a branch. Enabled, an event allocates nothing (names and categories are interned per thread
 * and session; pass string constants, not strings built per call, to keep it so).
 *
 * <p>Misuse throws {@link IllegalArgumentException} from every method alike: a category that was
 * given to no {@link Builder#categories builder} (nor made by {@link #dynamicCategory}) on every
 * call, and, when the category is recorded, a category of another TrackEvent or a null event name
 * for a slice or an instant.
 */
public final class TrackEvent {
  /** The data source name perfetto configs ask for. */
  public static final String DATA_SOURCE_NAME = "track_event";

  /** Adds annotations and flows to one event; called once per recording session. */
  @FunctionalInterface
  public interface EventFunction {
    /** Adds debug annotations and flows to the event being written. */
    void write(EventContext event);
  }

  /** Ends a slice of its category on the current thread when closed: a try-with-resources scope. */
  public final class Scope implements AutoCloseable {
    private final Category category;

    Scope(Category category) {
      this.category = category;
    }

    @Override
    public void close() {
      end(category);
    }
  }

  private static final DataSource.TraceFunction<Session> FLUSH = ctx -> ctx.flush();

  private final DataSource<Session> dataSource;
  private final String processName;
  private final List<Category> categories = new CopyOnWriteArrayList<>();
  private final Map<String, Category> dynamicCategories = new ConcurrentHashMap<>();
  private final Session[] sessions = new Session[DataSource.MAX_INSTANCES];
  private final boolean carrierTids;
  private final ThreadLocal<ThreadState> threads;
  /** The states virtual threads take turns on, one event at a time. */
  private final VirtualThreadStates virtualThreads;
  /**
   * The ThreadLocal's answers, direct-mapped by thread id: a hit is a field load and one compare,
   * where ThreadLocal.get() hashes into the thread's map through a weak reference (about 10 ns per
   * event). A slot only ever holds some thread's own state, checked against the calling thread;
   * states are immutable in the fields read here, so a slot written by another thread is safe to
   * read. A dead thread's state lingers until its slot is reused (at most {@link #THREAD_CACHE_SIZE}).
   */
  private final ThreadState[] threadCache = new ThreadState[THREAD_CACHE_SIZE];
  private static final int THREAD_CACHE_SIZE = 64;
  /**
   * The state of the thread that last missed {@link #threadCache} (a thread's first event, mostly):
   * in an app with one hot tracing thread, that thread's, found without the slot lookup, whose
   * loads (thread, id, array, slot, state) each wait on the one before. Written only on a miss, so
   * threads sharing this TrackEvent do not write it per event; safe to read from any thread for the
   * same reason as the slots. A dead thread's state lingers here until the next miss.
   */
  private ThreadState newest;
  private final Runnable sessionsChanged;
  private final Runnable sessionStopping;

  private TrackEvent(Builder b) {
    this.sessionsChanged = b.sessionsChanged;
    this.sessionStopping = b.sessionStopping;
    this.carrierTids = b.carrierTids;
    this.processName = b.processName != null ? b.processName : ProcessInfo.current().defaultName();
    TrackEventDescriptor.Builder available = TrackEventDescriptor.newBuilder();
    for (Category c : b.categories) {
      c.bind(this);
      categories.add(c);
      available.addAvailableCategories(TrackEventCategory.newBuilder().setName(c.name())
          .setDescription(c.description()).addAllTags(c.tags()));
    }
    // As upstream's SDK: the service sends clear_incremental_state only to sources that say they
    // handle it, counts the source started once its start is acked (the categories are on by then:
    // what "all data sources started" tells a consumer), and waits for the stop to be acked (after
    // the categories are off and the writers' last chunks committed) before it calls the session
    // stopped.
    DataSourceDescriptor descriptor = DataSourceDescriptor.newBuilder().setName(DATA_SOURCE_NAME)
        .setHandlesIncrementalStateClear(true).setWillNotifyOnStart(true).setWillNotifyOnStop(true)
        .setTrackEventDescriptor(available).build();
    this.dataSource = DataSource.create(descriptor, new Handler(), b.policy);
    this.threads = ThreadLocal.withInitial(() -> new ThreadState(this, dataSource));
    this.virtualThreads = new VirtualThreadStates(this, dataSource);
  }

  /** A builder with no categories yet. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a {@link TrackEvent}. */
  public static final class Builder {
    private final List<Category> categories = new java.util.ArrayList<>();
    private String processName;
    private BufferExhaustedPolicy policy = BufferExhaustedPolicy.DROP;
    private Runnable sessionsChanged = () -> { };
    private Runnable sessionStopping = () -> { };
    private boolean carrierTids;

    private Builder() {}

    /**
     * Whether each slice begin and instant of a virtual thread names its carrier, a debug argument
     * {@code carrier_tid} (off by default). It costs a gettid(2) system call per such event, about
     * as much again as the rest of a virtual thread's event on the project's VMs (docs/performance.md).
     */
    public Builder carrierTids(boolean on) {
      this.carrierTids = on;
      return this;
    }

    /**
     * Runs listener after a session started or stopped, once the categories' enabled state is
     * updated (e.g. to switch code that guards its trace points with its own flag).
     */
    public Builder onSessionsChanged(Runnable listener) {
      this.sessionsChanged = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Runs listener on the producer's thread when a session stops, while its categories are still
     * enabled: what it records still reaches that session (and any other running one), e.g. to close
     * operations still open. {@link #activeSessions()} counts the stopping session.
     */
    public Builder onSessionStopping(Runnable listener) {
      this.sessionStopping = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** The static categories (listed in the data source descriptor). */
    public Builder categories(Category... list) {
      for (Category c : list) {
        categories.add(Objects.requireNonNull(c, "category"));
      }
      return this;
    }

    /** process_name of the process track (default: the main class, else the executable). */
    public Builder processName(String name) {
      this.processName = Objects.requireNonNull(name, "process name");
      return this;
    }

    /** What writers do when the shared memory buffer is full (default DROP, as upstream). */
    public Builder bufferExhaustedPolicy(BufferExhaustedPolicy p) {
      this.policy = Objects.requireNonNull(p, "policy");
      return this;
    }

    /** The TrackEvent; its categories are bound to it from here on. */
    public TrackEvent build() {
      return new TrackEvent(this);
    }
  }

  /** The "track_event" data source to register with a TracingProducer. */
  public DataSource<?> dataSource() {
    return dataSource;
  }

  String processName() {
    return processName;
  }

  /** Whether virtual threads' slice begins and instants carry carrier_tid ({@link Builder#carrierTids}). */
  boolean carrierTids() {
    return carrierTids;
  }

  /** Sessions recording through this TrackEvent now (started, not yet stopped). */
  public int activeSessions() {
    return dataSource.activeInstances();
  }

  /** The categories registered so far (static, then dynamic ones in creation order). */
  public List<Category> categories() {
    return List.copyOf(categories);
  }

  /**
   * A category made at run time (e.g. from user input): the same object for the same name, enabled
   * by the running sessions' configs like a static one. Keep the result; the lookup allocates.
   */
  public Category dynamicCategory(String name, String... tags) {
    for (Category c : categories) {
      if (c.name().equals(name)) {
        return c;
      }
    }
    return dynamicCategories.computeIfAbsent(name, n -> {
      Category c = Category.of(n, tags);
      synchronized (this) {
        c.bind(this);
        for (int i = 0; i < sessions.length; i++) {
          if (sessions[i] != null) {
            c.setEnabled(i, sessions[i].isEnabled(c));
          }
        }
        categories.add(c);
      }
      return c;
    });
  }

  // ---- slices on the current thread's track ----

  /** Begins a slice on the current thread. */
  public void begin(Category category, String name) {
    if (category.enabledInstances() != 0
        && !threadState().laneSliceBegin(category, name)) {
      emit(TrackEventEncoder.TYPE_SLICE_BEGIN, category, null, name);
    }
  }

  /** Begins a slice with one integer debug annotation. */
  public void begin(Category category, String name, String arg, long value) {
    // A null argument name goes the regular way, which says what it makes of it.
    if (category.enabledInstances() != 0
        && (arg == null || !threadState().laneSliceBegin(category, name, arg, value))) {
      emit1(TrackEventEncoder.TYPE_SLICE_BEGIN, category, null, name, arg, TrackEventEncoder.ARG_LONG, value, null);
    }
  }

  /** Begins a slice with one string debug annotation. */
  public void begin(Category category, String name, String arg, String value) {
    if (category.enabledInstances() != 0) {
      emit1(TrackEventEncoder.TYPE_SLICE_BEGIN, category, null, name, arg, TrackEventEncoder.ARG_STRING, 0, value);
    }
  }

  /** Begins a slice whose annotations and flows fn writes. */
  public void begin(Category category, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitWith(TrackEventEncoder.TYPE_SLICE_BEGIN, category, null, name, fn);
    }
  }

  /** Ends the innermost slice of the current thread. */
  public void end(Category category) {
    if (category.enabledInstances() != 0
        && !threadState().laneSliceEnd(category)) {
      emit(TrackEventEncoder.TYPE_SLICE_END, category, null, null);
    }
  }

  /** Ends the innermost slice of the current thread, adding fn's annotations and flows to it. */
  public void end(Category category, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitWith(TrackEventEncoder.TYPE_SLICE_END, category, null, null, fn);
    }
  }

  /** Begins a slice and returns the scope that ends it (the same object every time: no allocation). */
  public Scope slice(Category category, String name) {
    begin(category, name);
    return scopeOf(category);
  }

  /** A scoped slice with one integer debug annotation. */
  public Scope slice(Category category, String name, String arg, long value) {
    begin(category, name, arg, value);
    return scopeOf(category);
  }

  /** A scoped slice whose annotations and flows fn writes. */
  public Scope slice(Category category, String name, EventFunction fn) {
    begin(category, name, fn);
    return scopeOf(category);
  }

  // ---- slices on custom tracks ----

  /** Begins a slice on a named track (slices on one track nest like a thread's). */
  public void begin(Category category, Track track, String name) {
    if (category.enabledInstances() != 0) {
      emit(TrackEventEncoder.TYPE_SLICE_BEGIN, category, requireSliceTrack(track), name);
    }
  }

  /** Begins a slice on a named track, with the annotations and flows fn writes. */
  public void begin(Category category, Track track, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitWith(TrackEventEncoder.TYPE_SLICE_BEGIN, category, requireSliceTrack(track), name, fn);
    }
  }

  /** Ends the innermost slice on track. */
  public void end(Category category, Track track) {
    if (category.enabledInstances() != 0) {
      emit(TrackEventEncoder.TYPE_SLICE_END, category, requireSliceTrack(track), null);
    }
  }

  // ---- events at a given time ----
  // For events recorded after the fact (a span written when it ends, events replayed from another
  // tracer): the time is on System.nanoTime()'s clock, the trace clock of every other event.

  /** Begins a slice on the current thread at nanoTime, with the annotations and flows fn writes (or null). */
  public void beginAt(long nanoTime, Category category, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitAt(nanoTime, TrackEventEncoder.TYPE_SLICE_BEGIN, category, null, name, fn);
    }
  }

  /** Ends the current thread's innermost slice at nanoTime, adding fn's annotations and flows (or null). */
  public void endAt(long nanoTime, Category category, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitAt(nanoTime, TrackEventEncoder.TYPE_SLICE_END, category, null, null, fn);
    }
  }

  /** Begins a slice on a named track at nanoTime, with the annotations and flows fn writes (or null). */
  public void beginAt(long nanoTime, Category category, Track track, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitAt(nanoTime, TrackEventEncoder.TYPE_SLICE_BEGIN, category, requireSliceTrack(track), name, fn);
    }
  }

  /** Ends the innermost slice on track at nanoTime, adding fn's annotations and flows (or null). */
  public void endAt(long nanoTime, Category category, Track track, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitAt(nanoTime, TrackEventEncoder.TYPE_SLICE_END, category, requireSliceTrack(track), null, fn);
    }
  }

  /** An instant at nanoTime on track (null: the current thread's), with fn's annotations (or null). */
  public void instantAt(long nanoTime, Category category, Track track, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      Track t = track == null ? null : requireSliceTrack(track);
      emitAt(nanoTime, TrackEventEncoder.TYPE_INSTANT, category, t, name, fn);
    }
  }

  // ---- instants ----

  /** An instant event on the current thread. */
  public void instant(Category category, String name) {
    if (category.enabledInstances() != 0) {
      emit(TrackEventEncoder.TYPE_INSTANT, category, null, name);
    }
  }

  /** An instant with one integer debug annotation. */
  public void instant(Category category, String name, String arg, long value) {
    if (category.enabledInstances() != 0) {
      emit1(TrackEventEncoder.TYPE_INSTANT, category, null, name, arg, TrackEventEncoder.ARG_LONG, value, null);
    }
  }

  /** An instant with two integer debug annotations. */
  public void instant(Category category, String name, String arg1, long value1, String arg2, long value2) {
    if (category.enabledInstances() != 0) {
      check(TrackEventEncoder.TYPE_INSTANT, category, name);
      ThreadState t = threadState();
      if (t.start(TrackEventEncoder.TYPE_INSTANT, category, null, name)) {
        t.arg(arg1, TrackEventEncoder.ARG_LONG, value1, null);
        t.arg(arg2, TrackEventEncoder.ARG_LONG, value2, null);
        t.emit();
      }
    }
  }

  /** An instant whose annotations and flows fn writes. */
  public void instant(Category category, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitWith(TrackEventEncoder.TYPE_INSTANT, category, null, name, fn);
    }
  }

  /** An instant on a named track. */
  public void instant(Category category, Track track, String name, EventFunction fn) {
    if (category.enabledInstances() != 0) {
      emitWith(TrackEventEncoder.TYPE_INSTANT, category, requireSliceTrack(track), name, fn);
    }
  }

  // ---- counters ----

  /** A value on a counter track. */
  public void counter(Category category, Track counterTrack, long value) {
    if (category.enabledInstances() != 0 && !threadState().laneCounter(category, counterTrack, value)) {
      check(TrackEventEncoder.TYPE_COUNTER, category, null);
      ThreadState t = threadState();
      if (t.start(TrackEventEncoder.TYPE_COUNTER, category, requireCounterTrack(counterTrack), null)) {
        t.counter(false, value);
        t.emit();
      }
    }
  }

  /** A floating-point value on a counter track. */
  public void counter(Category category, Track counterTrack, double value) {
    if (category.enabledInstances() != 0) {
      check(TrackEventEncoder.TYPE_COUNTER, category, null);
      ThreadState t = threadState();
      if (t.start(TrackEventEncoder.TYPE_COUNTER, category, requireCounterTrack(counterTrack), null)) {
        t.counter(true, Double.doubleToRawLongBits(value));
        t.emit();
      }
    }
  }

  // ---- writer control ----

  /**
   * Hands this thread's partly filled chunks to the service now (e.g. before a thread parks for
   * long, or before stopping a session from this thread).
   */
  public void flush() {
    if (!dataSource.isEnabled()) {
      return;
    }
    if (Thread.currentThread().isVirtual()) {
      virtualThreads.flush(FLUSH); // its events went through the shared states' writers
    } else {
      dataSource.trace(FLUSH);
    }
  }

  // ---- internals ----

  /**
   * The recording path's argument checks (the disabled path has none: a category no TrackEvent
   * registered is never disabled, see {@link Category#UNREGISTERED}, so it always gets here).
   */
  private void check(int type, Category category, String name) {
    if (category.owner() != this) {
      throw notRegistered(category);
    }
    if (name == null && (type == TrackEventEncoder.TYPE_SLICE_BEGIN || type == TrackEventEncoder.TYPE_INSTANT)) {
      throw new IllegalArgumentException("event name is null: category=" + category.name());
    }
  }

  private static IllegalArgumentException notRegistered(Category category) {
    return new IllegalArgumentException("category not registered with this TrackEvent: " + category.name());
  }

  private Scope scopeOf(Category category) {
    Scope s = category.scope();
    if (s == null || category.owner() != this) {
      throw notRegistered(category);
    }
    return s;
  }

  /** States virtual threads share, made so far (for tests). */
  int virtualThreadStates() {
    return virtualThreads.size();
  }

  /** Whether the calling thread's events go straight to the only active session's writer (for tests). */
  boolean onLane() {
    return threadState().onLane();
  }

  /**
   * The calling thread's state: {@link #newest} if it is this thread's, else through {@link
   * #threadCache}; for a virtual thread, a shared state held until the event's end. Every step of
   * an event waits on this answer, so the common case is one field load and one compare, beside the
   * current thread's own lookup rather than after it.
   */
  private ThreadState threadState() {
    Thread current = Thread.currentThread();
    ThreadState s = newest;
    if (s != null && s.thread() == current) {
      return s;
    }
    return cachedThreadState(current);
  }

  private ThreadState cachedThreadState(Thread current) {
    if (current.isVirtual()) {
      return virtualThreads.claim(current); // held for this event only (ThreadState#tryClaim)
    }
    int slot = (int) current.threadId() & (THREAD_CACHE_SIZE - 1);
    ThreadState s = threadCache[slot];
    if (s == null || s.thread() != current) {
      s = threads.get();
      threadCache[slot] = s;
      newest = s;
    }
    return s;
  }

  private void emit(int type, Category category, Track track, String name) {
    check(type, category, name);
    ThreadState t = threadState();
    if (t.start(type, category, track, name)) {
      t.emit();
    }
  }

  private void emit1(int type, Category category, Track track, String name, String arg, int kind, long bits,
      String text) {
    check(type, category, name);
    ThreadState t = threadState();
    if (t.start(type, category, track, name)) {
      t.arg(arg, kind, bits, text);
      t.emit();
    }
  }

  private void emitWith(int type, Category category, Track track, String name, EventFunction fn) {
    emitWith(ThreadState.NOW, type, category, track, name, fn);
  }

  /** An event whose annotations and flows fn writes (null: none), at nanoTime ({@link ThreadState#NOW}: now). */
  private void emitWith(long nanoTime, int type, Category category, Track track, String name, EventFunction fn) {
    check(type, category, name);
    ThreadState t = threadState();
    if (t.start(type, category, track, name)) {
      if (fn != null) {
        t.function(fn);
      }
      t.emitAt(nanoTime);
    }
  }

  private void emitAt(long nanoTime, int type, Category category, Track track, String name, EventFunction fn) {
    if (nanoTime == ThreadState.NOW) {
      throw new IllegalArgumentException("not a System.nanoTime() value: " + nanoTime);
    }
    emitWith(nanoTime, type, category, track, name, fn);
  }

  private static Track requireSliceTrack(Track track) {
    if (track.isCounter()) {
      throw new IllegalArgumentException("slices and instants need a named track, not " + track);
    }
    return track;
  }

  private static Track requireCounterTrack(Track track) {
    if (!track.isCounter()) {
      throw new IllegalArgumentException("counter values need a counter track, not " + track);
    }
    return track;
  }

  /** Session lifecycle: enables categories per instance from its TrackEventConfig. */
  private final class Handler implements DataSourceHandler<Session> {
    @Override
    public Session onSetup(DataSourceInstance<Session> instance) {
      return new Session(instance.config().getTrackEventConfig());
    }

    /**
     * Enables the session's categories once the instance is active, not in onStart: an app that
     * waits for {@link Category#isEnabled()} traces the moment it turns true, and a category
     * enabled before the instance was active let those first events reach no instance.
     */
    @Override
    public void onActive(DataSourceInstance<Session> instance) {
      Session session = instance.state();
      synchronized (TrackEvent.this) {
        sessions[instance.index()] = session;
        for (Category c : categories) {
          c.setEnabled(instance.index(), session.isEnabled(c));
        }
      }
      sessionsChanged.run();
    }

    @Override
    public void onStop(DataSourceInstance<Session> instance, StopHandle stop) {
      try {
        sessionStopping.run();
      } finally {
        disable(instance, stop);
      }
    }

    private void disable(DataSourceInstance<Session> instance, StopHandle stop) {
      synchronized (TrackEvent.this) {
        sessions[instance.index()] = null;
        for (Category c : categories) {
          c.setEnabled(instance.index(), false);
        }
      }
      sessionsChanged.run();
      stop.done();
    }
  }
}
