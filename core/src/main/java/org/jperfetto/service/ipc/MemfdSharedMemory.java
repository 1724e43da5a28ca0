package org.jperfetto.service.ipc;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.service.SharedMemory;

/**
 * A producer's SMB backed by a memfd sealed against resizing (F_SEAL_SHRINK | F_SEAL_GROW |
 * F_SEAL_SEAL, as upstream seals it), mapped shared into this process. {@link #handle()} is the
 * fd (an Integer) the producer port sends with setup_tracing; callers dup it before sending.
 */
public final class MemfdSharedMemory implements SharedMemory {
  private static final System.Logger LOG = System.getLogger(MemfdSharedMemory.class.getName());

  /** The seals an SMB must carry: nobody may shrink or grow it under a mapping, nor unseal it. */
  public static final int REQUIRED_SEALS = MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL;

  private final int fd;
  private final Arena arena;
  private final MemorySegment segment;
  private boolean closed;

  private MemfdSharedMemory(int fd, Arena arena, MemorySegment segment) {
    this.fd = fd;
    this.arena = arena;
    this.segment = segment;
  }

  /** The factory the socket host gives the service: a new sealed memfd per producer. */
  public static SharedMemory.Factory factory() {
    return MemfdSharedMemory::create;
  }

  /**
   * A zeroed, sealed memfd of sizeBytes, mapped.
   *
   * @throws java.io.UncheckedIOException if the kernel refuses (out of memory, fd limit)
   */
  public static MemfdSharedMemory create(long sizeBytes) {
    int fd;
    try {
      fd = MemFd.create("perfetto_shmem", sizeBytes);
    } catch (ErrnoException e) {
      throw new java.io.UncheckedIOException("creating a " + sizeBytes + "-byte SMB", e);
    }
    try {
      MemFd.addSeals(fd, REQUIRED_SEALS);
      return map(fd, sizeBytes);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e instanceof ErrnoException io
          ? new java.io.UncheckedIOException("sealing/mapping a " + sizeBytes + "-byte SMB", io)
          : (RuntimeException) e;
    }
  }

  /**
   * Adopts an SMB a producer sent with InitializeConnection (taking ownership of fd). Only a
   * sealed memfd whose size is a positive multiple of 4 KiB up to {@link ShmSizes#MAX_SIZE} is
   * mapped; anything else is closed and empty is returned, so the service makes its own (the
   * service then checks the size against the page size hint). An unsealed file is never mapped:
   * its owner could shrink it and fault the service.
   */
  public static Optional<SharedMemory> adoptFromProducer(int fd) {
    try {
      if (!MemFd.hasSeals(fd, REQUIRED_SEALS)) {
        LOG.log(Level.INFO, "producer SMB fd not sealed SHRINK|GROW|SEAL: ignored");
        Fds.closeQuietly(fd);
        return Optional.empty();
      }
      long size = MemFd.size(fd);
      if (size <= 0 || size % 4096 != 0 || size > ShmSizes.MAX_SIZE) {
        LOG.log(Level.INFO, "producer SMB size invalid: size=" + size + " (ignored)");
        Fds.closeQuietly(fd);
        return Optional.empty();
      }
      return Optional.of(map(fd, size));
    } catch (ErrnoException | RuntimeException e) {
      LOG.log(Level.INFO, "producer SMB fd unusable (ignored): " + e.getMessage());
      Fds.closeQuietly(fd);
      return Optional.empty();
    }
  }

  private static MemfdSharedMemory map(int fd, long size) throws ErrnoException {
    Arena arena = Arena.ofShared();
    try {
      return new MemfdSharedMemory(fd, arena, SharedMapping.map(fd, size, arena));
    } catch (ErrnoException | RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  /** The memfd; owned by this object (dup it to send it). */
  public int fd() {
    return fd;
  }

  @Override
  public MemorySegment segment() {
    return segment;
  }

  /** The fd as an Integer. */
  @Override
  public Object handle() {
    return fd;
  }

  /** Always true: unsealed files are never mapped. */
  @Override
  public boolean sealed() {
    return true;
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      arena.close();
      Fds.closeQuietly(fd);
    }
  }
}
