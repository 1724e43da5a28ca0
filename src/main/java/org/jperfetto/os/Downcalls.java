package org.jperfetto.os;

/**
 * When this package's downcalls get linked. Each libc function is linked on its first call (a
 * stub class is spun then, a few milliseconds each in a fresh JVM); {@link #linkAll()} does them
 * all at once, e.g. on a helper thread while a starting process does other work.
 */
public final class Downcalls {
  private Downcalls() {}

  /** Links every libc function this package calls; idempotent and thread-safe. */
  public static void linkAll() {
    Libc.linkAll();
  }
}
