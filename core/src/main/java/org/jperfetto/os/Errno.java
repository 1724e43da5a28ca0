package org.jperfetto.os;

/**
 * Linux errno values (the asm-generic numbering shared by x86_64 and aarch64) with their symbolic
 * names and a short description, so failures can say {@code EPIPE (broken pipe)} rather than 32.
 */
public final class Errno {
  public static final int EPERM = 1;
  public static final int ENOENT = 2;
  public static final int EINTR = 4;
  public static final int EIO = 5;
  public static final int EBADF = 9;
  public static final int EAGAIN = 11;
  /** Same value as {@link #EAGAIN} on Linux. */
  public static final int EWOULDBLOCK = EAGAIN;
  public static final int ENOMEM = 12;
  public static final int EACCES = 13;
  public static final int EFAULT = 14;
  public static final int EBUSY = 16;
  public static final int EEXIST = 17;
  public static final int ENOTDIR = 20;
  public static final int EISDIR = 21;
  public static final int EINVAL = 22;
  public static final int ENFILE = 23;
  public static final int EMFILE = 24;
  public static final int ENOSPC = 28;
  public static final int EPIPE = 32;
  public static final int ENAMETOOLONG = 36;
  public static final int ENOSYS = 38;
  public static final int ENOTSOCK = 88;
  public static final int EPROTOTYPE = 91;
  public static final int EOPNOTSUPP = 95;
  public static final int EADDRINUSE = 98;
  public static final int EADDRNOTAVAIL = 99;
  public static final int ECONNABORTED = 103;
  public static final int ECONNRESET = 104;
  public static final int ENOBUFS = 105;
  public static final int EISCONN = 106;
  public static final int ENOTCONN = 107;
  public static final int ETIMEDOUT = 110;
  public static final int ECONNREFUSED = 111;
  public static final int EALREADY = 114;
  public static final int EINPROGRESS = 115;

  private static final String[] NAMES = new String[128];
  private static final String[] TEXTS = new String[128];

  static {
    def(EPERM, "EPERM", "operation not permitted");
    def(ENOENT, "ENOENT", "no such file or directory");
    def(EINTR, "EINTR", "interrupted system call");
    def(EIO, "EIO", "input/output error");
    def(EBADF, "EBADF", "bad file descriptor");
    def(EAGAIN, "EAGAIN", "resource temporarily unavailable");
    def(ENOMEM, "ENOMEM", "cannot allocate memory");
    def(EACCES, "EACCES", "permission denied");
    def(EFAULT, "EFAULT", "bad address");
    def(EBUSY, "EBUSY", "device or resource busy");
    def(EEXIST, "EEXIST", "file exists");
    def(ENOTDIR, "ENOTDIR", "not a directory");
    def(EISDIR, "EISDIR", "is a directory");
    def(EINVAL, "EINVAL", "invalid argument");
    def(ENFILE, "ENFILE", "too many open files in system");
    def(EMFILE, "EMFILE", "too many open files");
    def(ENOSPC, "ENOSPC", "no space left on device");
    def(EPIPE, "EPIPE", "broken pipe");
    def(ENAMETOOLONG, "ENAMETOOLONG", "file name too long");
    def(ENOSYS, "ENOSYS", "function not implemented");
    def(ENOTSOCK, "ENOTSOCK", "socket operation on non-socket");
    def(EPROTOTYPE, "EPROTOTYPE", "protocol wrong type for socket");
    def(EOPNOTSUPP, "EOPNOTSUPP", "operation not supported");
    def(EADDRINUSE, "EADDRINUSE", "address already in use");
    def(EADDRNOTAVAIL, "EADDRNOTAVAIL", "cannot assign requested address");
    def(ECONNABORTED, "ECONNABORTED", "software caused connection abort");
    def(ECONNRESET, "ECONNRESET", "connection reset by peer");
    def(ENOBUFS, "ENOBUFS", "no buffer space available");
    def(EISCONN, "EISCONN", "transport endpoint is already connected");
    def(ENOTCONN, "ENOTCONN", "transport endpoint is not connected");
    def(ETIMEDOUT, "ETIMEDOUT", "connection timed out");
    def(ECONNREFUSED, "ECONNREFUSED", "connection refused");
    def(EALREADY, "EALREADY", "operation already in progress");
    def(EINPROGRESS, "EINPROGRESS", "operation now in progress");
  }

  private Errno() {}

  private static void def(int errno, String name, String text) {
    NAMES[errno] = name;
    TEXTS[errno] = text;
  }

  /** Symbolic name such as {@code "EPIPE"}, or {@code "errno 200"} for a value without one here. */
  public static String name(int errno) {
    String n = errno >= 0 && errno < NAMES.length ? NAMES[errno] : null;
    return n != null ? n : "errno " + errno;
  }

  /** Short human description, in the spirit of strerror(3). */
  public static String description(int errno) {
    String t = errno >= 0 && errno < TEXTS.length ? TEXTS[errno] : null;
    return t != null ? t : "unknown error";
  }
}
