package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JfrConfigTest {
  @Test
  void emptyConfigIsTheDefaults() {
    assertEquals(JfrConfig.DEFAULT, JfrConfig.parse(""));
    assertEquals(JfrConfig.DEFAULT, JfrConfig.parse(null));
    assertEquals(JfrConfig.DEFAULT, JfrConfig.parse("  \n "));
    JfrConfig d = JfrConfig.DEFAULT;
    assertTrue(d.has(EventGroup.GC) && d.has(EventGroup.LOCKS) && d.has(EventGroup.JIT));
    assertFalse(d.has(EventGroup.CLASSLOADING), "class loading is off by default, as in JFR's default.jfc");
    assertEquals(Duration.ofMillis(20), d.lockThreshold());
    assertEquals(8, d.stackDepth());
  }

  @Test
  void parsesEveryKey() {
    JfrConfig c = JfrConfig.parse("groups=default,classloading,-cpu; lock_threshold=5ms\njit_threshold=250us"
        + " safepoint_threshold=0 pinned_threshold=1s classload_threshold=100ns period=500ms"
        + " allocation_throttle=20/ms stack_depth=0");
    assertTrue(c.has(EventGroup.CLASSLOADING));
    assertFalse(c.has(EventGroup.CPU));
    assertTrue(c.has(EventGroup.GC));
    assertEquals(Duration.ofMillis(5), c.lockThreshold());
    assertEquals(Duration.ofNanos(250_000), c.jitThreshold());
    assertEquals(Duration.ZERO, c.safepointThreshold());
    assertEquals(Duration.ofSeconds(1), c.pinnedThreshold());
    assertEquals(Duration.ofNanos(100), c.classLoadThreshold());
    assertEquals(Duration.ofMillis(500), c.period());
    assertEquals("20/ms", c.allocationThrottle());
    assertEquals(0, c.stackDepth());
  }

  @Test
  void stackSamplesAreOnByDefaultAtJfrsDefaultPeriodAndDepth() {
    JfrConfig d = JfrConfig.DEFAULT;
    assertTrue(d.has(EventGroup.SAMPLES));
    assertEquals(new JfrConfig.Sampling(Duration.ofMillis(20), 64, JfrConfig.Sampler.WALL), d.sampling());
    Map<String, String> s = d.settings();
    assertEquals("true", s.get("jdk.ExecutionSample#enabled"));
    assertEquals("20000000 ns", s.get("jdk.ExecutionSample#period"));
    assertEquals("20000000 ns", s.get("jdk.NativeMethodSample#period"));
    assertFalse(s.containsKey("jdk.CPUTimeSample#enabled"), "the CPU-time sampler only when asked for");
  }

  @Test
  void parsesTheSamplingKeys() {
    JfrConfig c = JfrConfig.parse("sample_period=5ms sample_depth=12 sampler=cpu");
    assertEquals(new JfrConfig.Sampling(Duration.ofMillis(5), 12, JfrConfig.Sampler.CPU), c.sampling());
    Map<String, String> s = c.settings();
    assertEquals("true", s.get("jdk.CPUTimeSample#enabled"));
    assertEquals("5000us", s.get("jdk.CPUTimeSample#throttle"));
    assertFalse(s.containsKey("jdk.ExecutionSample#enabled"), "one sampler at a time");
    assertFalse(JfrConfig.parse("groups=default,-samples").settings().containsKey("jdk.ExecutionSample#enabled"));
  }

  @Test
  void groupsListReplacesTheDefaults() {
    assertEquals(EnumSet.of(EventGroup.GC, EventGroup.LOCKS), JfrConfig.parse("groups=gc,locks").groups());
    assertEquals(EnumSet.allOf(EventGroup.class), JfrConfig.parse("groups=all").groups());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
      "groups=gc,heapdump | unknown event group \"heapdump\"",
      "groups=-nope | unknown event group \"nope\"",
      "sample_period=500us | sample_period=500us is below 1ms",
      "sample_depth=0 | sample_depth=0 is outside 1..64",
      "sample_depth=65 | sample_depth=65 is outside 1..64",
      "sampler=async | sampler=async is not wall or cpu",
      "lock_threshold=-5ms | negative threshold lock_threshold=-5ms",
      "jit_threshold=-1 | negative threshold jit_threshold=-1",
      "lock_threshold=5 | lock_threshold=5 is not a duration",
      "lock_threshold=5min | lock_threshold=5min is not a duration",
      "lock_threshold=99999999999999999999s | out of range",
      "period=1ms | period=1ms is below 10ms",
      "allocation_throttle=lots | allocation_throttle=lots is not a rate",
      "stack_depth=65 | stack_depth=65 is outside 0..64",
      "stack_depth=x | stack_depth=x is not a number",
      "colour=blue | unknown key \"colour\"",
      "gc | expected key=value, got \"gc\"",
  })
  void badConfigsAreRefusedSayingWhat(String text, String message) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JfrConfig.parse(text));
    assertTrue(e.getMessage().startsWith("jvm.jfr config: "), e.getMessage());
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }

  @Test
  void settingsEnableTheGroupsWithTheirThresholds() {
    Map<String, String> s =
        JfrConfig.parse("groups=gc,locks,cpu,allocation lock_threshold=3ms period=250ms stack_depth=0").settings();
    assertEquals("true", s.get("jdk.GarbageCollection#enabled"));
    assertEquals("0 ns", s.get("jdk.GarbageCollection#threshold"));
    assertEquals("3000000 ns", s.get("jdk.ThreadPark#threshold"));
    assertEquals("3000000 ns", s.get("jdk.JavaMonitorEnter#threshold"));
    assertEquals("false", s.get("jdk.ThreadPark#stackTrace"), "stack_depth=0: no stacks");
    assertEquals("250000000 ns", s.get("jdk.CPULoad#period"));
    assertEquals("150/s", s.get("jdk.ObjectAllocationSample#throttle"));
    assertFalse(s.containsKey("jdk.Compilation#enabled"), "jit not asked for");
    assertFalse(s.containsKey("jdk.SafepointBegin#enabled"));
    assertEquals("true", JfrConfig.DEFAULT.settings().get("jdk.JavaMonitorWait#stackTrace"));
  }

  @Test
  void everyEventTypeBelongsToOneGroup() {
    for (EventGroup g : EventGroup.values()) {
      assertEquals(g, EventGroup.byConfigName(g.configName()));
      for (String type : g.eventTypes()) {
        assertEquals(g, EventGroup.ofEventType(type), type);
      }
    }
  }
}
