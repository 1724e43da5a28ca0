package org.jperfetto.producer;

import java.util.Objects;
import org.jperfetto.protos.DataSourceDescriptor;

/**
 * A named source of trace data that a {@link TracingProducer} registers with the service. Sessions
 * that ask for it create instances (up to {@link #MAX_INSTANCES} at once, e.g. two concurrent
 * sessions); {@link #trace} writes through the calling thread's {@link TraceWriter} to every active
 * instance.
 *
 * <p>While no instance is active, {@link #trace} costs one volatile read and a branch.
 *
 * @param <S> per-instance state kept by the handler
 */
public final class DataSource<S> {
  /** Instances active at once, as upstream's SDK (kMaxDataSourceInstances). */
  public static final int MAX_INSTANCES = 8;

  /** The work {@link #trace} runs once per active instance. */
  @FunctionalInterface
  public interface TraceFunction<S> {
    void trace(TraceContext<S> context);
  }

  /** One active (or set up) instance and the connection it writes to. */
  record Slot<S>(DataSourceInstance<S> instance, SharedMemoryArbiter arbiter, int targetBuffer,
      long generation) {}

  /** The calling thread's writers, one per slot, and the slot generation each was made for. */
  private static final class PerThread<S> {
    final TraceContext<S>[] contexts;
    final long[] generations = new long[MAX_INSTANCES];

    @SuppressWarnings("unchecked")
    PerThread() {
      contexts = (TraceContext<S>[]) new TraceContext<?>[MAX_INSTANCES];
    }
  }

  private final DataSourceDescriptor descriptor;
  private final DataSourceHandler<S> handler;
  private final BufferExhaustedPolicy policy;
  @SuppressWarnings("unchecked")
  private final Slot<S>[] slots = (Slot<S>[]) new Slot<?>[MAX_INSTANCES]; // written before activeMask
  private volatile int activeMask;
  private final ThreadLocal<PerThread<S>> perThread = ThreadLocal.withInitial(PerThread::new);

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

  public String name() {
    return descriptor.getName();
  }

  public DataSourceDescriptor descriptor() {
    return descriptor;
  }

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
    traceActive(mask, fn);
  }

  private void traceActive(int mask, TraceFunction<S> fn) {
    PerThread<S> local = perThread.get();
    for (int bits = mask; bits != 0; bits &= bits - 1) {
      int i = Integer.numberOfTrailingZeros(bits);
      Slot<S> slot = slots[i];
      if (slot == null) {
        continue;
      }
      TraceContext<S> ctx = local.contexts[i];
      if (ctx == null || local.generations[i] != slot.generation()) {
        if (ctx != null) {
          ctx.writer().close(); // the slot's previous instance is over
        }
        ctx = new TraceContext<>(TraceWriter.create(slot.arbiter(), slot.targetBuffer(), policy),
            slot.instance());
        local.contexts[i] = ctx;
        local.generations[i] = slot.generation();
      }
      fn.trace(ctx);
      ctx.finishTracePacket();
    }
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

  void activate(int index) {
    activeMask |= 1 << index; // volatile write publishes the slot
  }

  void deactivate(int index) {
    activeMask &= ~(1 << index);
  }

  void release(int index) {
    deactivate(index);
    slots[index] = null;
  }
}
