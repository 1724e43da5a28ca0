package org.jperfetto.service;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A producer's shared memory buffer (SMB) as the service sees it. The socket host backs it with a
 * sealed memfd whose descriptor it sends to the producer; tests and in-process producers back it
 * with plain native memory ({@link #arenaFactory()}).
 */
public interface SharedMemory extends AutoCloseable {
  /** The mapped memory, aligned to 4 KiB. */
  MemorySegment segment();

  /** The mapped size in bytes. */
  default long size() {
    return segment().byteSize();
  }

  /**
   * What the transport needs to share this memory (an fd for a memfd); opaque to the service,
   * null when there is nothing to pass (in-process).
   */
  Object handle();

  /** True if the producer cannot resize it under the service (memfd seals SHRINK|GROW|SEAL). */
  boolean sealed();

  /** Unmaps the memory; the service calls it once no chunk of it is in use. */
  @Override
  void close();

  /** Makes the SMBs the service creates for producers. */
  @FunctionalInterface
  interface Factory {
    /** A zeroed shared memory of sizeBytes (a multiple of 4 KiB). */
    SharedMemory create(long sizeBytes);
  }

  /** SMBs in native memory of this process (for in-process producers and tests). */
  static Factory arenaFactory() {
    return ArenaSharedMemory::new;
  }

  /** Native memory from a shared arena; "sealed" because nobody outside the process can resize it. */
  final class ArenaSharedMemory implements SharedMemory {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private boolean closed;

    ArenaSharedMemory(long size) {
      segment = arena.allocate(size, 4096);
    }

    @Override
    public MemorySegment segment() {
      return segment;
    }

    @Override
    public Object handle() {
      return null;
    }

    @Override
    public boolean sealed() {
      return true;
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        arena.close();
      }
    }
  }
}
