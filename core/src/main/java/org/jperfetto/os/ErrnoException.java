package org.jperfetto.os;

import java.io.IOException;

/**
 * A failed system call: which call, what it was applied to (a path, an fd) and the errno, e.g.
 * {@code "connect(/tmp/perfetto-producer): ENOENT (no such file or directory)"}.
 */
public final class ErrnoException extends IOException {
  private final String call;
  private final int errno;

  public ErrnoException(String call, int errno) {
    this(call, errno, null);
  }

  /** {@code subject} names what the call was applied to; may be null. */
  public ErrnoException(String call, int errno, String subject) {
    super(call + (subject == null ? "" : "(" + subject + ")") + ": " + Errno.name(errno) + " ("
        + Errno.description(errno) + ")");
    this.call = call;
    this.errno = errno;
  }

  /** The libc function that failed, e.g. {@code "sendmsg"}. */
  public String call() {
    return call;
  }

  public int errno() {
    return errno;
  }

  /** Symbolic errno name, e.g. {@code "EPIPE"}. */
  public String errnoName() {
    return Errno.name(errno);
  }

  /** True for EAGAIN / EWOULDBLOCK: a non-blocking call that had nothing to do. */
  public boolean isWouldBlock() {
    return errno == Errno.EAGAIN;
  }
}
