package org.jperfetto.os;

/**
 * When this package's downcalls get linked. Each libc function is linked on its first call (the
 * first of them spins the one stub all share, some milliseconds in a fresh JVM; the others look up
 * their symbol and bind it); {@link #linkAll()} does them all at once, e.g. on a helper thread
 * while a starting process does other work.
 */
public final class Downcalls {
  private Downcalls() {}

  /** Links every libc function this package calls; idempotent and thread-safe. */
  public static void linkAll() {
    Libc.linkAll();
  }
}
