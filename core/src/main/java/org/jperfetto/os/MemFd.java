package org.jperfetto.os;

import java.lang.foreign.Arena;

/**
 * Anonymous shared memory files (memfd_create) with file seals: the kind of descriptor a shared
 * memory buffer travels as. Seals are Linux's {@code F_SEAL_*} bits.
 */
public final class MemFd {
  /** No more seals may be added. */
  public static final int F_SEAL_SEAL = 0x1;
  /** The file may not shrink. */
  public static final int F_SEAL_SHRINK = 0x2;
  /** The file may not grow. */
  public static final int F_SEAL_GROW = 0x4;
  /** The contents may not be written (and no writable shared mapping may exist). */
  public static final int F_SEAL_WRITE = 0x8;

  private MemFd() {}

  /**
   * A new memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING) of {@code size} zero bytes. {@code name} only
   * labels it in /proc/PID/fd and /proc/PID/maps (as {@code /memfd:name}).
   */
  public static int create(String name, long size) throws ErrnoException {
    if (size < 0) {
      throw new IllegalArgumentException("memfd size must not be negative: " + name + " size=" + size);
    }
    if (name.indexOf('\0') >= 0) {
      throw new ErrnoException("memfd_create", Errno.EINVAL, name.replace('\0', '?'));
    }
    Scratch s = Scratch.get();
    int fd;
    try (Arena arena = Arena.ofConfined()) {
      fd = Libc.memfdCreate(s, arena.allocateFrom(name), Libc.MFD_CLOEXEC | Libc.MFD_ALLOW_SEALING, name);
    }
    try {
      Libc.ftruncate(s, fd, size);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
    return fd;
  }

  /** ftruncate(2): fails with EPERM when a seal forbids the change. */
  public static void resize(int fd, long size) throws ErrnoException {
    Libc.ftruncate(Scratch.get(), fd, size);
  }

  /** fcntl(F_ADD_SEALS): EPERM once F_SEAL_SEAL is set, EBUSY for F_SEAL_WRITE over a writable mapping. */
  public static void addSeals(int fd, int seals) throws ErrnoException {
    Libc.fcntl(Scratch.get(), fd, Libc.F_ADD_SEALS, seals);
  }

  /** fcntl(F_GET_SEALS): the seals set on {@code fd}; EINVAL if it is not a sealable file. */
  public static int seals(int fd) throws ErrnoException {
    return Libc.fcntl(Scratch.get(), fd, Libc.F_GET_SEALS, 0);
  }

  /** Whether every seal in {@code required} is set on {@code fd} (false for unsealable files). */
  public static boolean hasSeals(int fd, int required) throws ErrnoException {
    try {
      return (seals(fd) & required) == required;
    } catch (ErrnoException e) {
      if (e.errno() == Errno.EINVAL) {
        return false;
      }
      throw e;
    }
  }

  /** The file size in bytes (fstat st_size). */
  public static long size(int fd) throws ErrnoException {
    return Libc.fstatSize(Scratch.get(), fd);
  }
}
