package org.jperfetto.producer.jfr;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What the {@code jvm.jfr} data source records: event groups, thresholds, the counters' period,
 * the allocation sample throttle and how many stack frames an event keeps.
 *
 * <p>It travels in {@code DataSourceConfig.legacy_config} (field 1000), a plain string that
 * upstream's perfetto command line, its text config parser and traced all pass through untouched.
 * The string is {@code key=value} settings separated by spaces, semicolons or new lines; an empty
 * string means the defaults. For example:
 *
 * <pre>
 * groups=default,classloading,-cpu lock_threshold=5ms jit_threshold=1ms stack_depth=16
 * </pre>
 *
 * <p>Keys: {@code groups} (comma list of group names, {@code default}, {@code all}, {@code -name}
 * to remove one; see {@link EventGroup}), {@code lock_threshold}, {@code safepoint_threshold},
 * {@code jit_threshold}, {@code pinned_threshold}, {@code classload_threshold} (durations with a
 * unit: ns, us, ms, s), {@code period} (counters' sampling period, at least 10ms),
 * {@code allocation_throttle} (samples per time, e.g. {@code 150/s}) and {@code stack_depth}
 * (0..64 frames kept per event, 0 for none); for the {@code samples} group {@code sample_period}
 * (default 20ms, at least 1ms), {@code sample_depth} (1..64 frames a stack sample keeps, default 64)
 * and {@code sampler} ({@code wall}, the default, or {@code cpu}; see {@link Sampler}). Anything else
 * is refused by {@link #parse}.
 */
public record JfrConfig(Set<EventGroup> groups, Duration lockThreshold, Duration safepointThreshold,
    Duration jitThreshold, Duration pinnedThreshold, Duration classLoadThreshold, Duration period,
    String allocationThrottle, int stackDepth, Sampling sampling) {

  /** Most frames an event keeps. */
  public static final int MAX_STACK_DEPTH = 64;
  /** Shortest counter period: JFR's own periodic events do not go faster than this usefully. */
  public static final Duration MIN_PERIOD = Duration.ofMillis(10);

  /** JFR's "default" settings where it has them; JIT at 10 ms so a trace shows the slow ones. */
  public static final JfrConfig DEFAULT = new JfrConfig(defaultGroups(), Duration.ofMillis(20),
      Duration.ofMillis(10), Duration.ofMillis(10), Duration.ofMillis(20), Duration.ofMillis(1),
      Duration.ofSeconds(1), "150/s", 8, Sampling.DEFAULT);

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ns|us|ms|s)?");
  private static final Pattern THROTTLE = Pattern.compile("(\\d+)/(ns|us|ms|s|m|h|d)");
  private static final Pattern SEPARATORS = Pattern.compile("[\\s;]+");

  /** Keeps an unmodifiable copy of the groups. */
  public JfrConfig {
    groups = Collections.unmodifiableSet(groups.isEmpty() ? EnumSet.noneOf(EventGroup.class) : EnumSet.copyOf(groups));
  }

  private static Set<EventGroup> defaultGroups() {
    EnumSet<EventGroup> set = EnumSet.noneOf(EventGroup.class);
    for (EventGroup g : EventGroup.values()) {
      if (g.enabledByDefault()) {
        set.add(g);
      }
    }
    return set;
  }

  /**
   * Parses a legacy_config string (null or blank: the defaults).
   *
   * @throws IllegalArgumentException naming the bad key or value
   */
  public static JfrConfig parse(String text) {
    JfrConfig c = DEFAULT;
    if (text == null || text.isBlank()) {
      return c;
    }
    for (String token : SEPARATORS.split(text.strip())) {
      int eq = token.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("jvm.jfr config: expected key=value, got \"" + token + "\"");
      }
      String key = token.substring(0, eq);
      String value = token.substring(eq + 1);
      c = switch (key) {
        case "groups" -> c.withGroups(parseGroups(value));
        case "lock_threshold" -> new JfrConfig(c.groups, threshold(key, value), c.safepointThreshold,
            c.jitThreshold, c.pinnedThreshold, c.classLoadThreshold, c.period,
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "safepoint_threshold" -> new JfrConfig(c.groups, c.lockThreshold, threshold(key, value),
            c.jitThreshold, c.pinnedThreshold, c.classLoadThreshold, c.period,
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "jit_threshold" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold,
            threshold(key, value), c.pinnedThreshold, c.classLoadThreshold, c.period,
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "pinned_threshold" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold,
            c.jitThreshold, threshold(key, value), c.classLoadThreshold, c.period,
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "classload_threshold" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold,
            c.jitThreshold, c.pinnedThreshold, threshold(key, value), c.period,
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "period" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold, c.jitThreshold,
            c.pinnedThreshold, c.classLoadThreshold, period(value),
            c.allocationThrottle, c.stackDepth, c.sampling);
        case "allocation_throttle" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold,
            c.jitThreshold, c.pinnedThreshold, c.classLoadThreshold, c.period, throttle(value),
            c.stackDepth, c.sampling);
        case "stack_depth" -> new JfrConfig(c.groups, c.lockThreshold, c.safepointThreshold, c.jitThreshold,
            c.pinnedThreshold, c.classLoadThreshold, c.period, c.allocationThrottle,
            stackDepth(value), c.sampling);
        case "sample_period" -> c.withSampling(
            new Sampling(samplePeriod(value), c.sampling.depth(), c.sampling.sampler()));
        case "sample_depth" -> c.withSampling(
            new Sampling(c.sampling.period(), sampleDepth(value), c.sampling.sampler()));
        case "sampler" -> c.withSampling(c.sampling.withSampler(Sampler.byConfigName(value)));
        default -> throw new IllegalArgumentException("jvm.jfr config: unknown key \"" + key
            + "\" (known: groups, lock_threshold, safepoint_threshold, jit_threshold, pinned_threshold,"
            + " classload_threshold, period, allocation_throttle, stack_depth, sample_period, sample_depth,"
            + " sampler)");
      };
    }
    return c;
  }

  /** This config with other groups. */
  public JfrConfig withGroups(Set<EventGroup> newGroups) {
    return new JfrConfig(newGroups, lockThreshold, safepointThreshold, jitThreshold, pinnedThreshold,
        classLoadThreshold, period, allocationThrottle, stackDepth, sampling);
  }

  /** This config with other stack sampling settings. */
  public JfrConfig withSampling(Sampling newSampling) {
    return new JfrConfig(groups, lockThreshold, safepointThreshold, jitThreshold, pinnedThreshold,
        classLoadThreshold, period, allocationThrottle, stackDepth, newSampling);
  }

  /** Whether the config records group's events. */
  public boolean has(EventGroup group) {
    return groups.contains(group);
  }

  private static Set<EventGroup> parseGroups(String value) {
    EnumSet<EventGroup> set = EnumSet.noneOf(EventGroup.class);
    for (String name : value.split(",", -1)) {
      switch (name) {
        case "default" -> set.addAll(defaultGroups());
        case "all" -> set.addAll(EnumSet.allOf(EventGroup.class));
        default -> {
          boolean remove = name.startsWith("-");
          String bare = remove ? name.substring(1) : name;
          EventGroup g = EventGroup.byConfigName(bare);
          if (g == null) {
            throw new IllegalArgumentException("jvm.jfr config: unknown event group \"" + bare
                + "\" (known: " + knownGroups() + ", default, all)");
          }
          if (remove) {
            set.remove(g);
          } else {
            set.add(g);
          }
        }
      }
    }
    return set;
  }

  private static String knownGroups() {
    return EnumSet.allOf(EventGroup.class).stream().map(EventGroup::configName).collect(Collectors.joining(", "));
  }

  private static Duration threshold(String key, String value) {
    if (value.startsWith("-")) {
      throw new IllegalArgumentException("jvm.jfr config: negative threshold " + key + "=" + value);
    }
    Matcher m = DURATION.matcher(value);
    if (!m.matches() || (m.group(2) == null && !m.group(1).chars().allMatch(ch -> ch == '0'))) {
      throw new IllegalArgumentException("jvm.jfr config: " + key + "=" + value
          + " is not a duration (a number with ns, us, ms or s; or 0)");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("jvm.jfr config: " + key + "=" + value + " is out of range");
    }
    String unit = m.group(2) == null ? "ns" : m.group(2);
    try {
      return switch (unit) {
        case "ns" -> Duration.ofNanos(n);
        case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1000L));
        case "ms" -> Duration.ofMillis(n);
        default -> Duration.ofSeconds(n);
      };
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("jvm.jfr config: " + key + "=" + value + " is out of range");
    }
  }

  private static Duration period(String value) {
    Duration d = threshold("period", value);
    if (d.compareTo(MIN_PERIOD) < 0) {
      throw new IllegalArgumentException("jvm.jfr config: period=" + value + " is below "
          + MIN_PERIOD.toMillis() + "ms");
    }
    return d;
  }

  private static String throttle(String value) {
    Matcher m = THROTTLE.matcher(value);
    if (!m.matches()) {
      throw new IllegalArgumentException("jvm.jfr config: allocation_throttle=" + value
          + " is not a rate like 150/s (units ns, us, ms, s, m, h, d)");
    }
    return value;
  }

  private static Duration samplePeriod(String value) {
    Duration d = threshold("sample_period", value);
    if (d.compareTo(Sampling.MIN_PERIOD) < 0) {
      throw new IllegalArgumentException("jvm.jfr config: sample_period=" + value + " is below "
          + Sampling.MIN_PERIOD.toMillis() + "ms (to turn sampling off: groups=default,-samples)");
    }
    return d;
  }

  private static int sampleDepth(String value) {
    return depth("sample_depth", value, 1);
  }

  private static int stackDepth(String value) {
    return depth("stack_depth", value, 0);
  }

  /** A frame count from min to MAX_STACK_DEPTH. */
  private static int depth(String key, String value, int min) {
    int n;
    try {
      n = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("jvm.jfr config: " + key + "=" + value + " is not a number");
    }
    if (n < min || n > MAX_STACK_DEPTH) {
      throw new IllegalArgumentException("jvm.jfr config: " + key + "=" + value + " is outside " + min + ".."
          + MAX_STACK_DEPTH);
    }
    return n;
  }

  /**
   * The JFR settings for a RecordingStream ({@code "jdk.ThreadPark#threshold" -> "20000000 ns"}):
   * each enabled group's event types on, with their threshold, period or throttle, and stack traces
   * only when {@link #stackDepth} keeps any. Types of groups left out are not mentioned (so off).
   */
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    for (EventGroup g : groups) {
      if (g == EventGroup.SAMPLES) {
        sampling.putSettings(s);
        continue;
      }
      for (String type : g.eventTypes()) {
        s.put(type + "#enabled", "true");
        Duration threshold = thresholdOf(type);
        if (threshold != null) {
          s.put(type + "#threshold", threshold.toNanos() + " ns");
        }
        if (isPeriodic(type)) {
          s.put(type + "#period", period.toNanos() + " ns");
        }
        if (hasStack(type)) {
          s.put(type + "#stackTrace", Boolean.toString(stackDepth > 0));
        }
      }
    }
    if (groups.contains(EventGroup.ALLOCATION)) {
      s.put("jdk.ObjectAllocationSample#throttle", allocationThrottle);
    }
    return s;
  }

  private Duration thresholdOf(String type) {
    return switch (type) {
      case "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark", "jdk.ThreadSleep" -> lockThreshold;
      case "jdk.SafepointBegin" -> safepointThreshold;
      case "jdk.Compilation" -> jitThreshold;
      case "jdk.VirtualThreadPinned" -> pinnedThreshold;
      case "jdk.ClassLoad" -> classLoadThreshold;
      case "jdk.GarbageCollection", "jdk.GCPhasePause", "jdk.GCPhasePauseLevel1", "jdk.GCPhasePauseLevel2",
          "jdk.GCPhaseConcurrent", "jdk.GCPhaseConcurrentLevel1" -> Duration.ZERO;
      default -> null;
    };
  }

  private static boolean isPeriodic(String type) {
    return switch (type) {
      case "jdk.CPULoad", "jdk.ExceptionStatistics", "jdk.JavaThreadStatistics", "jdk.ClassLoadingStatistics" -> true;
      default -> false;
    };
  }

  private static boolean hasStack(String type) {
    return switch (type) {
      case "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark", "jdk.ThreadSleep",
          "jdk.ObjectAllocationSample", "jdk.ThreadStart", "jdk.VirtualThreadPinned",
          "jdk.VirtualThreadSubmitFailed", "jdk.ClassLoad" -> true;
      default -> false;
    };
  }

  /** Which JFR sampler takes the Java stack samples of the {@code samples} group. */
  public enum Sampler {
    /**
     * JFR's execution and native method samplers (jdk.ExecutionSample, jdk.NativeMethodSample):
     * every period, some threads running Java code and some in native code, by wall clock.
     */
    WALL("wall", List.of("jdk.ExecutionSample", "jdk.NativeMethodSample")),
    /**
     * JFR's CPU-time sampler (jdk.CPUTimeSample, JDK 25+ on Linux, experimental there): a sample per
     * period of CPU time each thread uses, in Java or native code alike.
     */
    CPU("cpu", List.of("jdk.CPUTimeSample"));

    private final String configName;
    private final List<String> eventTypes;

    Sampler(String configName, List<String> eventTypes) {
      this.configName = configName;
      this.eventTypes = eventTypes;
    }

    /** The name a config uses for it. */
    public String configName() {
      return configName;
    }

    /** The JFR event types it records. */
    public List<String> eventTypes() {
      return eventTypes;
    }

    static Sampler byConfigName(String name) {
      for (Sampler s : values()) {
        if (s.configName.equals(name)) {
          return s;
        }
      }
      throw new IllegalArgumentException("jvm.jfr config: sampler=" + name + " is not wall or cpu");
    }
  }

  /**
   * How the {@code samples} group samples Java stacks: the period (JFR's default, 20 ms), the most
   * frames a sample keeps (the leaf's end; JFR's default depth, 64) and the sampler.
   */
  public record Sampling(Duration period, int depth, Sampler sampler) {
    /** JFR's default.jfc: 20 ms, 64 frames, the execution (wall-clock) sampler. */
    public static final Sampling DEFAULT = new Sampling(Duration.ofMillis(20), MAX_STACK_DEPTH, Sampler.WALL);
    /** Shortest period: JFR's samplers do not sample faster than once a millisecond. */
    public static final Duration MIN_PERIOD = Duration.ofMillis(1);

    /** This sampling with another sampler. */
    public Sampling withSampler(Sampler s) {
      return new Sampling(period, depth, s);
    }

    void putSettings(Map<String, String> s) {
      String every = period.toNanos() + " ns";
      switch (sampler) {
        case WALL -> {
          for (String type : Sampler.WALL.eventTypes()) {
            s.put(type + "#enabled", "true");
            s.put(type + "#period", every);
          }
        }
        case CPU -> {
          // The throttle of the CPU-time sampler takes either a rate or a CPU-time period.
          s.put("jdk.CPUTimeSample#enabled", "true");
          s.put("jdk.CPUTimeSample#throttle", period.toNanos() / 1000 + "us");
          s.put("jdk.CPUTimeSample#stackTrace", "true");
          s.put("jdk.CPUTimeSamplesLost#enabled", "true");
        }
        default -> throw new IllegalStateException("sampler " + sampler);
      }
    }
  }
}
