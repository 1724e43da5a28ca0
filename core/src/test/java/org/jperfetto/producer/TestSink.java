package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.ipc.wire.CommitBatch;

/**
 * An arbiter over a fresh SMB whose CommitSink feeds a {@link ServiceSide}: at once on the
 * committing thread (SYNC), from a separate draining thread (ASYNC), or only when the test says
 * so (LAZY, to make the SMB run out).
 */
final class TestSink implements SharedMemoryArbiter.CommitSink, AutoCloseable {
  enum Mode { SYNC, ASYNC, LAZY }

  final Arena arena = Arena.ofShared();
  final MemorySegment smb;
  final ServiceSide service;
  final SharedMemoryArbiter arbiter;
  final AtomicInteger registered = new AtomicInteger();
  final AtomicInteger unregistered = new AtomicInteger();
  private final Mode mode;
  private final Semaphore wake = new Semaphore(0);
  private final Thread drainer;
  private volatile boolean closing;
  private CommitBatch spare = new CommitBatch();

  TestSink(Mode mode, int pages, int pageSize, long bufferBytes) {
    this(mode, pages, pageSize, bufferBytes, WriterFlush::membarrier);
  }

  /** With the flusher's process barrier given (one returning false: as without membarrier). */
  TestSink(Mode mode, int pages, int pageSize, long bufferBytes,
      java.util.function.BooleanSupplier processBarrier) {
    this.mode = mode;
    this.smb = arena.allocate((long) pages * pageSize, 4096);
    this.service = new ServiceSide(smb, pageSize, bufferBytes);
    this.arbiter = new SharedMemoryArbiter(new org.jperfetto.abi.SharedMemoryAbi(smb, pageSize), this,
        processBarrier);
    if (mode == Mode.ASYNC) {
      drainer = Thread.ofPlatform().daemon().name("test-drainer").start(() -> {
        while (!closing) {
          try {
            wake.tryAcquire(10, TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            return;
          }
          wake.drainPermits();
          drain();
        }
      });
    } else {
      drainer = null;
    }
  }

  @Override
  public void commitPending() {
    switch (mode) {
      case SYNC -> drain();
      case ASYNC -> wake.release();
      case LAZY -> { }
      default -> throw new IllegalStateException("unknown sink mode " + mode);
    }
  }

  @Override
  public void registerTraceWriter(int writerId, int targetBuffer) {
    registered.incrementAndGet();
  }

  @Override
  public void unregisterTraceWriter(int writerId) {
    unregistered.incrementAndGet();
  }

  /** Sends what is pending to the service side. */
  synchronized void drain() {
    CommitBatch batch = arbiter.drainTo(spare);
    if (!batch.isEmpty()) {
      service.commit(CommitRequests.toProto(batch));
    }
    spare = batch;
  }

  TraceWriter newWriter(BufferExhaustedPolicy policy) {
    return TraceWriter.create(arbiter, 1, policy);
  }

  /** Packets read back so far, per writer id. */
  java.util.Map<Integer, Long> packetsPerWriter() {
    java.util.Map<Integer, Long> counts = new java.util.HashMap<>();
    for (ServiceSide.Read r : service.readAll()) {
      counts.merge(r.writerId(), 1L, Long::sum);
    }
    return counts;
  }

  @Override
  public void close() {
    closing = true;
    if (drainer != null) {
      try {
        drainer.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while the drainer finished", e);
      }
    }
    service.buffer.close();
    arena.close();
  }
}
