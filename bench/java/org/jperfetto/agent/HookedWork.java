package org.jperfetto.agent;

/** The benchmarked method: small enough that a per-call cost shows. */
public final class HookedWork {
  private HookedWork() {}

  public static int mix(int x) {
    return x * 31 + (x >>> 7);
  }
}
