package org.jperfetto.cli;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.util.Properties;

/**
 * What {@code jperfetto attach} learns of a running JVM through the Attach API before it chooses
 * how to trace it: its main class, its JDK (the system properties {@code java.version},
 * {@code java.specification.version}) and whether its command line refuses dynamic agents.
 *
 * @param pid the process
 * @param mainClass the main class or jar as the JVM reports it ("" if none)
 * @param javaVersion {@code java.version}, e.g. {@code 17.0.15}
 * @param feature the JDK feature release, e.g. 17
 * @param agentsRefused started with {@code -XX:-EnableDynamicAgentLoading}
 */
record TargetJvm(long pid, String mainClass, String javaVersion, int feature, boolean agentsRefused) {
  /** The oldest JDK whose Flight Recorder {@code jperfetto attach} drives (FlightRecorderMXBean). */
  static final int JFR_FEATURE = 11;
  /** The oldest JDK whose FlightRecorderMXBean streams; older ones are read in chunks. */
  static final int STREAMING_FEATURE = 16;
  /** The oldest JDK the in-target agent runs on (FFM). */
  static final int AGENT_FEATURE = 22;

  /** How attach traces a JVM. */
  enum Mode {
    /** Loads the jperfetto agent into the JVM: JFR events and method slices. */
    AGENT,
    /** Drives the JVM's Flight Recorder from outside, over JMX: JFR events only, nothing loaded. */
    JFR;

    /** The name on the command line ({@code --mode}) and in {@code --list}. */
    String word() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    static Mode of(String word) {
      for (Mode m : values()) {
        if (m.word().equals(word)) {
          return m;
        }
      }
      throw new IllegalArgumentException("unknown mode " + word + " (agent or jfr)");
    }
  }

  /** Reads what attach needs from a JVM it is attached to. */
  static TargetJvm of(long pid, VirtualMachine vm) throws IOException {
    Properties system = vm.getSystemProperties();
    Properties agent = vm.getAgentProperties();
    String mainClass = mainOf(agent.getProperty("sun.java.command", ""));
    String version = system.getProperty("java.version", system.getProperty("java.vm.version", "?"));
    String args = agent.getProperty("sun.jvm.args", "") + " " + agent.getProperty("sun.jvm.flags", "");
    return new TargetJvm(pid, mainClass, version, feature(system.getProperty("java.specification.version")),
        args.contains("-XX:-EnableDynamicAgentLoading"));
  }

  /**
   * The main class (or jar) of a JVM's command line (sun.java.command), or "" if none; for a
   * program run from source ({@code java Prog.java}), the source file's name rather than the
   * launcher's class.
   */
  static String mainOf(String command) {
    String[] words = command.strip().split("\\s+", 3);
    if (words[0].contains("javac.launcher.") && words.length > 1) {
      return java.nio.file.Path.of(words[1]).getFileName().toString();
    }
    return words[0];
  }

  /** Attaches to pid, reads it, detaches. */
  static TargetJvm inspect(long pid) throws IOException, AttachNotSupportedException {
    VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
    try {
      return of(pid, vm);
    } finally {
      vm.detach();
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

  /** The mode attach uses without {@code --mode}: the agent where it can run, else JFR; null if neither. */
  Mode defaultMode() {
    if (feature >= AGENT_FEATURE && !agentsRefused) {
      return Mode.AGENT;
    }
    return feature >= JFR_FEATURE ? Mode.JFR : null;
  }

  /** Why mode cannot trace this JVM, or null if it can. */
  String refusal(Mode mode) {
    return switch (mode) {
      case AGENT -> feature < AGENT_FEATURE
          ? "JVM " + pid + " runs JDK " + javaVersion + " and the agent needs JDK " + AGENT_FEATURE
              + "+; `jperfetto attach " + pid + " --mode jfr` records its JFR events without the agent"
          : agentsRefused
              ? "JVM " + pid + " refuses dynamic agents (-XX:-EnableDynamicAgentLoading); `jperfetto attach "
                  + pid + " --mode jfr` records its JFR events without the agent"
              : null;
      case JFR -> feature < JFR_FEATURE
          ? "JVM " + pid + " runs JDK " + javaVersion + "; driving its Flight Recorder from outside needs JDK "
              + JFR_FEATURE + "+ (FlightRecorderMXBean), and the agent JDK " + AGENT_FEATURE + "+"
          : null;
    };
  }
}
