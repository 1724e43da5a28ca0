package org.jperfetto.os;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Maps a file descriptor (typically a {@link MemFd}) read-write and shared, as a MemorySegment
 * whose lifetime is the given Arena: closing the arena (or, for {@link Arena#ofAuto()}, its
 * collection) munmaps it. Use {@link Arena#ofShared()} when several threads touch the buffer, and
 * close it only after they have stopped. The descriptor itself is not consumed: the caller may
 * close it right after mapping.
 */
@SuppressWarnings("restricted") // reinterpret gives the mmap result its size and cleanup
public final class SharedMapping {
  private static final System.Logger LOG = System.getLogger(SharedMapping.class.getName());

  private SharedMapping() {}

  /**
   * mmap(PROT_READ | PROT_WRITE, MAP_SHARED) of the first {@code size} bytes of {@code fd}.
   * {@code size} must be positive and within the file's current size, so touching the segment
   * cannot fault; a descriptor from an untrusted peer should also carry F_SEAL_SHRINK (see
   * {@link MemFd#hasSeals}), or the peer could shrink the file under the mapping.
   */
  public static MemorySegment map(int fd, long size, Arena arena) throws ErrnoException {
    if (size <= 0) {
      throw new ErrnoException("mmap", Errno.EINVAL, "fd " + fd + " size " + size + " must be positive");
    }
    long fileSize = MemFd.size(fd);
    if (size > fileSize) {
      throw new ErrnoException("mmap", Errno.EINVAL,
          "fd " + fd + " size " + size + " beyond the file size " + fileSize);
    }
    long address = Libc.mmapShared(Scratch.get(), fd, size);
    try {
      return MemorySegment.ofAddress(address).reinterpret(size, arena, unused -> unmap(address, size));
    } catch (RuntimeException e) { // the arena was already closed
      unmap(address, size);
      throw e;
    }
  }

  /**
   * size bytes of private anonymous memory, zero, committed page by page as they are first written
   * (MAP_NORESERVE: the kernel neither reserves swap nor touches them now), unmapped when arena
   * closes. What a large, mostly empty trace buffer wants: its cost grows with the data it holds.
   */
  public static MemorySegment mapAnonymous(long size, Arena arena) throws ErrnoException {
    if (size <= 0) {
      throw new ErrnoException("mmap", Errno.EINVAL, "anonymous size " + size + " must be positive");
    }
    long address = Libc.mmapAnonymous(Scratch.get(), size);
    try {
      return MemorySegment.ofAddress(address).reinterpret(size, arena, unused -> unmap(address, size));
    } catch (RuntimeException e) {
      unmap(address, size);
      throw e;
    }
  }

  /**
   * Commits length bytes of mapping (from offset, both whole pages) now, as writes to them would
   * (madvise MADV_POPULATE_WRITE, Linux 5.14+): one call instead of a page fault per page.
   *
   * @throws ErrnoException if the kernel cannot (EINVAL on older kernels, ENOMEM, ...)
   */
  public static void populate(MemorySegment mapping, long offset, long length) throws ErrnoException {
    if (offset < 0 || length <= 0 || offset > mapping.byteSize() - length) {
      throw new ErrnoException("madvise", Errno.EINVAL, "range " + offset + "+" + length + " outside "
          + mapping.byteSize() + " bytes");
    }
    Libc.madvise(Scratch.get(), mapping.address() + offset, length, Libc.MADV_POPULATE_WRITE);
  }

  private static void unmap(long address, long size) {
    try {
      Libc.munmap(Scratch.get(), address, size);
    } catch (ErrnoException e) {
      LOG.log(Level.ERROR, e.getMessage());
    }
  }
}
