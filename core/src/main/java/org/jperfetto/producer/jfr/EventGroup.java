package org.jperfetto.producer.jfr;

import java.util.List;

/**
 * The groups of JFR events the bridge can turn on, by the name a config uses for them. Each group
 * lists the JFR event types it enables; which setting (threshold, period, throttle) applies to each
 * type is decided by {@link JfrConfig#settings()}.
 */
public enum EventGroup {
  /** Collections, pause phases per collector, concurrent phases, heap summary (used/committed). */
  GC("gc", true, List.of("jdk.GarbageCollection", "jdk.GCPhasePause", "jdk.GCPhasePauseLevel1",
      "jdk.GCPhasePauseLevel2", "jdk.GCPhaseConcurrent", "jdk.GCPhaseConcurrentLevel1",
      "jdk.GCHeapSummary")),
  /** Safepoints (begin to end), above a threshold. */
  SAFEPOINT("safepoint", true, List.of("jdk.SafepointBegin")),
  /** JIT compilations with their method names, above a threshold. */
  JIT("jit", true, List.of("jdk.Compilation")),
  /** Blocking on monitors (enter, wait), parking and sleeping, above a threshold. */
  LOCKS("locks", true, List.of("jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark",
      "jdk.ThreadSleep")),
  /** Throttled allocation samples (class, weight) and the sampled allocated bytes. */
  ALLOCATION("allocation", true, List.of("jdk.ObjectAllocationSample")),
  /** The count of throwables created, as a counter. */
  EXCEPTIONS("exceptions", true, List.of("jdk.ExceptionStatistics")),
  /** JVM user/system and machine CPU load, as counters. */
  CPU("cpu", true, List.of("jdk.CPULoad")),
  /** Thread start and end, and the live thread count. */
  THREADS("threads", true, List.of("jdk.ThreadStart", "jdk.ThreadEnd", "jdk.JavaThreadStatistics")),
  /** Virtual threads pinned to their carrier (above a threshold) and failed submits. */
  VTHREADS("vthreads", true, List.of("jdk.VirtualThreadPinned", "jdk.VirtualThreadSubmitFailed")),
  /**
   * Java stack samples on the thread's timeline: by default JFR's execution and native method
   * samplers (the event types listed here); the config's {@code sampler} may choose JFR's CPU-time
   * sampler instead (see {@link JfrConfig.Sampler}).
   */
  SAMPLES("samples", true, List.of("jdk.ExecutionSample", "jdk.NativeMethodSample", "jdk.CPUTimeSample")),
  /** Class loads above a threshold and the loaded class count; off by default as in JFR's default. */
  CLASSLOADING("classloading", false, List.of("jdk.ClassLoad", "jdk.ClassLoadingStatistics"));

  private final String configName;
  private final boolean byDefault;
  private final List<String> eventTypes;

  EventGroup(String configName, boolean byDefault, List<String> eventTypes) {
    this.configName = configName;
    this.byDefault = byDefault;
    this.eventTypes = eventTypes;
  }

  /** The name a config uses for the group, e.g. {@code "gc"}. */
  public String configName() {
    return configName;
  }

  /** Whether an empty config turns the group on. */
  public boolean enabledByDefault() {
    return byDefault;
  }

  /** The JFR event types the group enables. */
  public List<String> eventTypes() {
    return eventTypes;
  }

  /** The group called name in a config, or null. */
  public static EventGroup byConfigName(String name) {
    for (EventGroup g : values()) {
      if (g.configName.equals(name)) {
        return g;
      }
    }
    return null;
  }

  /** The group that enables a JFR event type, or null. */
  public static EventGroup ofEventType(String eventType) {
    for (EventGroup g : values()) {
      if (g.eventTypes.contains(eventType)) {
        return g;
      }
    }
    return null;
  }
}
