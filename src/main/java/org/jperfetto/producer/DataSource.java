package org.jperfetto.producer;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.protos.DataSourceDescriptor;

/**
 * A named source of trace data that a {@link TracingProducer} registers with the service. Sessions
 * that ask for it create instances (up to {@link #MAX_INSTANCES} at once, e.g. two concurrent
 * sessions); {@link #trace} writes through the calling thread's {@link TraceWriter} to every active
 * instance (on a virtual thread, through one of a few writers virtual threads share).
 *
 * <p>While no instance is active, {@link #trace} costs one volatile read and a branch.
 *
 * @param <S> per-instance state kept by the handler
 */
public final class DataSource<S> {
  /** Instances active at once, as upstream's SDK (kMaxDataSourceInstances). */
  public static final int MAX_INSTANCES = 8;

  /**
   * The most writer sets virtual threads share per data source: four per core, at most 256. Each
   * holds a chunk per active instance, so more sets than the SMB has chunks to spare would drop
   * for want of chunks; a virtual thread that finds them all held yields, holding nothing, and
   * looks again.
   */
  public static final int MAX_VIRTUAL_THREAD_WRITERS =
      Math.min(256, 4 * Math.max(1, Runtime.getRuntime().availableProcessors()));

  /** The work {@link #trace} runs once per active instance. */
  @FunctionalInterface
  public interface TraceFunction<S> {
    /** Writes into one active instance; called once per instance by {@link DataSource#trace}. */
    void trace(TraceContext<S> context);
  }

  /** One active (or set up) instance and the connection it writes to. */
  record Slot<S>(DataSourceInstance<S> instance, SharedMemoryArbiter arbiter, int targetBuffer,
      long generation) {}

  /**
   * One thread's writers for this data source, one per instance slot, and the slot generation each
   * was made for. {@link #trace(TraceFunction)} finds the calling thread's through a ThreadLocal; a
   * caller that already keeps per-thread state (TrackEvent) holds it from {@link #threadWriters()}
   * and passes it to {@link #trace(ThreadWriters, TraceFunction)}, saving that lookup per event.
   * Only its thread may use it, and its writers are closed once that thread has ended. Writers from
   * {@link #unboundWriters()} belong to no thread instead.
   */
  public static final class ThreadWriters<S> {
    private final DataSource<S> owner;
    /** The thread these writers serve; null for unbound ones. */
    private final Thread thread;
    private final TraceContext<S>[] contexts;
    private final long[] generations = new long[MAX_INSTANCES];
    /** For the sets virtual threads share ({@link DataSource#trace(TraceFunction)}): 1 while held. */
    private final AtomicInteger held = new AtomicInteger();

    @SuppressWarnings("unchecked")
    private ThreadWriters(DataSource<S> owner, Thread thread) {
      this.owner = owner;
      this.thread = thread;
      this.contexts = (TraceContext<S>[]) new TraceContext<?>[MAX_INSTANCES];
    }
  }

  private final DataSourceDescriptor descriptor;
  private final DataSourceHandler<S> handler;
  private final BufferExhaustedPolicy policy;
  @SuppressWarnings("unchecked")
  private final Slot<S>[] slots = (Slot<S>[]) new Slot<?>[MAX_INSTANCES]; // written before activeMask
  private volatile int activeMask;
  /** Moves on after every change to the slots or activeMask: see {@link #instancesVersion}. */
  private volatile long instancesVersion;
  private final ThreadLocal<ThreadWriters<S>> perThread =
      ThreadLocal.withInitial(() -> new ThreadWriters<>(this, Thread.currentThread()));
  /** Unbound writer sets that virtual threads hold one trace call at a time; grows to the limit. */
  @SuppressWarnings("unchecked")
  private volatile ThreadWriters<S>[] virtualThreadWriters = (ThreadWriters<S>[]) new ThreadWriters<?>[0];

  private DataSource(DataSourceDescriptor descriptor, DataSourceHandler<S> handler,
      BufferExhaustedPolicy policy) {
    if (descriptor.getName().isEmpty()) {
      throw new IllegalArgumentException("data source descriptor without a name");
    }
    this.descriptor = descriptor;
    this.handler = Objects.requireNonNull(handler, "handler");
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** A data source described by descriptor (its name is the one sessions ask for). */
  public static <S> DataSource<S> create(DataSourceDescriptor descriptor, DataSourceHandler<S> handler,
      BufferExhaustedPolicy policy) {
    return new DataSource<>(descriptor, handler, policy);
  }

  /** A data source with just a name, no callbacks and the DROP policy. */
  public static DataSource<Void> named(String name) {
    return new DataSource<>(DataSourceDescriptor.newBuilder().setName(name).build(),
        new DataSourceHandler<>() {}, BufferExhaustedPolicy.DROP);
  }

  /** The name sessions ask for in DataSourceConfig.name. */
  public String name() {
    return descriptor.getName();
  }

  /** What is registered with the service for this data source. */
  public DataSourceDescriptor descriptor() {
    return descriptor;
  }

  /** What a writer does when the shared memory buffer has no free chunk. */
  public BufferExhaustedPolicy policy() {
    return policy;
  }

  DataSourceHandler<S> handler() {
    return handler;
  }

  /** Whether any instance is active (a volatile read). */
  public boolean isEnabled() {
    return activeMask != 0;
  }

  /** Number of active instances. */
  public int activeInstances() {
    return Integer.bitCount(activeMask);
  }

  /**
   * Runs fn once for every active instance with the calling thread's writer for it, and ends the
   * packet fn left open. Pass a non-capturing lambda (or a constant) to allocate nothing.
   */
  public void trace(TraceFunction<S> fn) {
    int mask = activeMask;
    if (mask == 0) {
      return;
    }
    Thread current = Thread.currentThread();
    if (current.isVirtual()) {
      traceShared(current, mask, fn);
      return;
    }
    traceActive(perThread.get(), mask, fn);
  }

  /**
   * A virtual thread's trace: through one of a few writer sets that virtual threads share, held for
   * this call only. A writer per virtual thread, as a platform thread has, would take a writer id
   * and a chunk per virtual thread alive: a thousand of them at once used up both, and everything
   * after was dropped. So fn gets a writer (a sequence) that other virtual threads write on before
   * and after: state kept per sequence (interning) belongs to the writer, never to the thread, and
   * fn must not block (the set stays held meanwhile).
   */
  private void traceShared(Thread current, int mask, TraceFunction<S> fn) {
    ThreadWriters<S> w = claimShared(current);
    try {
      traceActive(w, mask, fn);
    } finally {
      w.held.set(0);
    }
  }

  private ThreadWriters<S> claimShared(Thread current) {
    for (;;) {
      ThreadWriters<S>[] sets = virtualThreadWriters;
      int n = sets.length;
      int start = n == 0 ? 0 : (int) Long.remainderUnsigned(current.threadId(), n);
      for (int i = 0; i < n; i++) {
        ThreadWriters<S> w = sets[(start + i) % n];
        if (w.held.get() == 0 && w.held.compareAndSet(0, 1)) {
          return w;
        }
      }
      if (!growShared(sets)) {
        Thread.yield(); // all held: let the holders run (this thread holds nothing)
      }
    }
  }

  /** Doubles the shared sets if seen is still current and below the limit; whether it looked again. */
  private synchronized boolean growShared(ThreadWriters<S>[] seen) {
    if (virtualThreadWriters != seen) {
      return true;
    }
    int n = seen.length;
    if (n >= MAX_VIRTUAL_THREAD_WRITERS) {
      return false;
    }
    int size = Math.min(MAX_VIRTUAL_THREAD_WRITERS, n == 0 ? 2 : 2 * n);
    ThreadWriters<S>[] grown = Arrays.copyOf(seen, size);
    for (int i = n; i < size; i++) {
      grown[i] = unboundWriters();
    }
    virtualThreadWriters = grown;
    return true;
  }

  /** Writer sets virtual threads share, made so far (for tests). */
  int virtualThreadWriterSets() {
    return virtualThreadWriters.length;
  }

  /**
   * The calling thread's writers, for {@link #trace(ThreadWriters, TraceFunction)}: the same ones
   * {@link #trace(TraceFunction)} uses on this thread.
   */
  public ThreadWriters<S> threadWriters() {
    return perThread.get();
  }

  /**
   * Writers of this data source bound to no thread: for a caller that hands one set to whichever
   * thread holds it at the time (TrackEvent's writers for virtual threads), making sure no two
   * threads use it at once. Their writers live until their instance ends, whatever thread made them.
   */
  public ThreadWriters<S> unboundWriters() {
    return new ThreadWriters<>(this, null);
  }

  /**
   * As {@link #trace(TraceFunction)}, with the calling thread's writers (or unbound ones it holds)
   * already at hand.
   *
   * @throws IllegalArgumentException if writers belong to another data source or thread
   */
  public void trace(ThreadWriters<S> writers, TraceFunction<S> fn) {
    int mask = activeMask;
    if (mask == 0) {
      return;
    }
    requireOwnWriters(writers);
    // traceActive's loop again, on purpose: the JIT profiles the types fn has at each call site in
    // the bytecode, and a trace point that passes one TraceFunction class (TrackEvent's) gets that
    // class inlined here. Through the shared loop, the first other class passed anywhere (a flush,
    // another data source) threw the compiled trace point away, as a real session began.
    for (int bits = mask; bits != 0; bits &= bits - 1) {
      TraceContext<S> ctx = context(writers, Integer.numberOfTrailingZeros(bits));
      if (ctx != null) {
        fn.trace(ctx);
        ctx.finishTracePacket();
      }
    }
  }

  private void requireOwnWriters(ThreadWriters<S> writers) {
    if (writers.owner != this || (writers.thread != null && writers.thread != Thread.currentThread())) {
      throw new IllegalArgumentException("thread writers of " + writers.owner.name() + " on "
          + writers.thread + " used for " + name() + " on " + Thread.currentThread());
    }
  }

  private void traceActive(ThreadWriters<S> local, int mask, TraceFunction<S> fn) {
    for (int bits = mask; bits != 0; bits &= bits - 1) {
      TraceContext<S> ctx = context(local, Integer.numberOfTrailingZeros(bits));
      if (ctx != null) {
        fn.trace(ctx);
        ctx.finishTracePacket();
      }
    }
  }

  /**
   * A number that changes after every change to the instances (one set up, started, stopped or
   * released, or its incremental state cleared). A caller that keeps what {@link #soleContext}
   * returned may write through it instead of {@link #trace(ThreadWriters, TraceFunction)} for as
   * long as this number stays the one it read before calling soleContext: it is then still the only
   * active instance, with the same writer and the same incremental state.
   */
  public long instancesVersion() {
    return instancesVersion;
  }

  /**
   * The calling thread's context for the only active instance, or null when none or several are
   * active or this thread has no current writer for it yet (it gets one from its first {@link
   * #trace(ThreadWriters, TraceFunction)} call). See {@link #instancesVersion}.
   *
   * @throws IllegalArgumentException if writers belong to another data source or thread
   */
  public TraceContext<S> soleContext(ThreadWriters<S> writers) {
    requireOwnWriters(writers);
    int mask = activeMask;
    if (mask == 0 || (mask & (mask - 1)) != 0) {
      return null;
    }
    int i = Integer.numberOfTrailingZeros(mask);
    Slot<S> slot = slots[i];
    TraceContext<S> ctx = writers.contexts[i];
    return slot != null && ctx != null && writers.generations[i] == slot.generation() ? ctx : null;
  }

  /** The thread's context for slot i's instance (a new writer if the instance is new), or null if none. */
  private TraceContext<S> context(ThreadWriters<S> local, int i) {
    Slot<S> slot = slots[i];
    if (slot == null) {
      return null;
    }
    TraceContext<S> ctx = local.contexts[i];
    if (ctx == null || local.generations[i] != slot.generation()) {
      ctx = newContext(local, i, slot);
    }
    return ctx;
  }

  /** A writer for the slot's (new) instance, closing the one of the instance it had before. */
  private TraceContext<S> newContext(ThreadWriters<S> local, int i, Slot<S> slot) {
    TraceContext<S> old = local.contexts[i];
    if (old != null) {
      old.writer().close(); // the slot's previous instance is over
    }
    TraceContext<S> ctx = new TraceContext<>(
        TraceWriter.create(slot.arbiter(), slot.targetBuffer(), policy, local.thread), slot.instance());
    local.contexts[i] = ctx;
    local.generations[i] = slot.generation();
    return ctx;
  }

  // ---- instance bookkeeping, producer thread only ----

  private long nextGeneration = 1;

  /** A free slot index, or -1 when {@link #MAX_INSTANCES} instances exist. */
  int freeSlot() {
    for (int i = 0; i < MAX_INSTANCES; i++) {
      if (slots[i] == null) {
        return i;
      }
    }
    return -1;
  }

  /** Puts an instance in its slot (not active yet). */
  void setUp(DataSourceInstance<S> instance, SharedMemoryArbiter arbiter, int targetBuffer) {
    slots[instance.index()] = new Slot<>(instance, arbiter, targetBuffer, nextGeneration++);
    instancesVersion++;
  }

  Slot<S> slot(int index) {
    return slots[index];
  }

  /** Index of the slot holding instanceId, or -1. */
  int indexOf(long instanceId) {
    for (int i = 0; i < MAX_INSTANCES; i++) {
      Slot<S> s = slots[i];
      if (s != null && s.instance().instanceId() == instanceId) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Starts a set-up instance: the handler's onStart, then the instance active (trace reaches it),
   * then onActive, in that order wherever an instance starts.
   */
  void start(DataSourceInstance<S> instance) {
    handler.onStart(instance);
    activate(instance.index());
    handler.onActive(instance);
  }

  void activate(int index) {
    activeMask |= 1 << index; // volatile write publishes the slot
    instancesVersion++;
  }

  void deactivate(int index) {
    activeMask &= ~(1 << index);
    instancesVersion++;
  }

  void release(int index) {
    deactivate(index);
    slots[index] = null;
    instancesVersion++;
  }

  /**
   * An instance's incremental state was cleared (after its generation moved on): moves {@link
   * #instancesVersion} too, so whatever holds on to an instance's sequence while the version stays
   * put (TrackEvent's lane) needs no generation test of its own.
   */
  void incrementalStateCleared() {
    instancesVersion++;
  }
}
