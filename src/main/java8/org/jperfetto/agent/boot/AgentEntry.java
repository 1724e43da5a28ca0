package org.jperfetto.agent.boot;

import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The agent jar's entry point ({@code Premain-Class} and {@code Agent-Class}), compiled for class
 * file version 52 (Java 8) so that every JVM can load it: it checks the runtime before any class
 * of jperfetto (JDK 22+) is linked. On an older JDK it prints one line on standard error, saying
 * which JDK the agent needs and that {@code jperfetto attach PID} gives the JVM's JFR events
 * without it, and returns: the application runs untraced, as if there were no agent. On JDK 22+
 * it hands over to {@code AgentBoot}, by name, so nothing of it is linked before the check.
 *
 * <p>Whatever happens, the outcome is left in the system property {@link #STATUS}
 * ({@code started}, or {@code failed: WHY}; see {@code AgentBoot.STATUS}), where
 * {@code jperfetto attach} reads it back through the Attach API: agentmain never throws, so the
 * target's standard error gets no stack trace.
 */
public final class AgentEntry {
  /** AgentBoot.STATUS, spelled here again: this class must not link AgentBoot before the check. */
  private static final String STATUS = "jperfetto.agent.status";
  /** The oldest JDK feature release the agent runs on. */
  public static final int NEEDS_FEATURE = 22;
  private static final String BOOT = "org.jperfetto.agent.boot.AgentBoot";

  private AgentEntry() {}

  /** {@code -javaagent:jperfetto-agent.jar[=options]}. */
  public static void premain(String options, Instrumentation inst) {
    enter("premain", options, inst);
  }

  /** Loaded into a running JVM ({@code jperfetto attach PID --mode agent}). */
  public static void agentmain(String options, Instrumentation inst) {
    enter("agentmain", options, inst);
  }

  private static void enter(String method, String options, Instrumentation inst) {
    int feature = feature(System.getProperty("java.specification.version"));
    if (feature < NEEDS_FEATURE) {
      String why = "needs JDK " + NEEDS_FEATURE + "+, this JVM runs " + System.getProperty("java.version");
      System.setProperty(STATUS, "failed: " + why);
      System.err.println("jperfetto agent: not started: it " + why + "; `jperfetto attach "
          + pid() + "` records this JVM's JFR events without the agent");
      return;
    }
    try {
      Method m = Class.forName(BOOT, true, AgentEntry.class.getClassLoader())
          .getMethod(method, String.class, Instrumentation.class);
      m.invoke(null, options, inst);
    } catch (InvocationTargetException e) {
      // AgentBoot reported the failure and set STATUS already.
    } catch (Exception | LinkageError e) {
      System.setProperty(STATUS, "failed: " + e);
      System.err.println("jperfetto agent: not started: " + e);
    }
  }

  /** The feature release of a java.specification.version ("1.8" or "17"); 0 if unknown. */
  static int feature(String spec) {
    try {
      return spec.startsWith("1.") ? Integer.parseInt(spec.substring(2)) : Integer.parseInt(spec);
    } catch (RuntimeException e) { // null, or not a number
      return 0;
    }
  }

  /** This process's id where the JVM tells it (JDK 9+), else a placeholder. */
  private static String pid() {
    try {
      Class<?> type = Class.forName("java.lang.ProcessHandle");
      return String.valueOf(type.getMethod("pid").invoke(type.getMethod("current").invoke(null)));
    } catch (Exception | LinkageError e) {
      return "PID";
    }
  }
}
