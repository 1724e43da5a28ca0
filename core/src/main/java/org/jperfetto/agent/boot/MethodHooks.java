package org.jperfetto.agent.boot;

/**
 * What instrumented methods call: {@code enter(id)} first, {@code exit(id)} on every return and
 * when an exception leaves the method. It sits with the agent's entry point in the agent jar,
 * which the JVM puts on the system class path, so application classes can link to it; it uses
 * nothing but java.base. The agent proper (in its own class loader) installs the {@link Sink}.
 *
 * <p>While no session records method slices both calls are one volatile load and a branch once
 * the JIT inlines them.
 */
public final class MethodHooks {
  /** Receives the calls while enabled; ids come from the agent's method table. */
  public interface Sink {
    void enter(int methodId);

    void exit(int methodId);
  }

  private static volatile boolean enabled;
  private static volatile Sink sink;

  private MethodHooks() {}

  /** Called first by an instrumented method. */
  public static void enter(int methodId) {
    if (enabled) {
      Sink s = sink;
      if (s != null) {
        s.enter(methodId);
      }
    }
  }

  /** Called when an instrumented method returns or throws. */
  public static void exit(int methodId) {
    if (enabled) {
      Sink s = sink;
      if (s != null) {
        s.exit(methodId);
      }
    }
  }

  /** Installs the agent's sink (replacing any). */
  public static void install(Sink s) {
    sink = s;
  }

  /** Turns the calls into the sink on or off (on while a session records method slices). */
  public static void setEnabled(boolean on) {
    enabled = on;
  }

  public static boolean isEnabled() {
    return enabled;
  }
}
