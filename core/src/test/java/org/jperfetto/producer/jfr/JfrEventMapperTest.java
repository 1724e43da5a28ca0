package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jperfetto.producer.jfr.JvmEvent.Arg;
import org.jperfetto.producer.jfr.JvmEvent.Counter;
import org.jperfetto.producer.jfr.JvmEvent.Slice;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The mapping checked against a real recording of GCs, monitor contention and parking. */
@Timeout(60)
class JfrEventMapperTest {
  static final JfrConfig CONFIG =
      JfrConfig.parse("groups=gc,locks,threads,cpu,allocation lock_threshold=1ms stack_depth=4");
  static List<RecordedEvent> events;
  static JvmWorkload workload = new JvmWorkload();

  @BeforeAll
  static void record(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("workload.jfr");
    try (Recording r = new Recording()) {
      r.setSettings(CONFIG.settings());
      r.start();
      JvmWorkload.allocate(64);
      workload.contend();
      workload.park(3);
      JvmWorkload.allocate(16);
      r.stop();
      r.dump(file);
    }
    events = RecordingFile.readAllEvents(file);
  }

  static List<RecordedEvent> ofType(String type) {
    return events.stream().filter(e -> e.getEventType().getName().equals(type)).toList();
  }

  @Test
  void garbageCollectionsBecomeSlicesWithJfrsDurationsOnTheirThread() {
    List<RecordedEvent> gcs = ofType("jdk.GarbageCollection");
    assertFalse(gcs.isEmpty(), "the workload collects");
    JfrEventMapper mapper = new JfrEventMapper(CONFIG);
    for (RecordedEvent gc : gcs) {
      List<JvmEvent> out = mapper.map(gc);
      assertEquals(1, out.size());
      Slice s = (Slice) out.get(0);
      assertEquals(gc.getDuration().toNanos(), s.durationNanos(), "JFR's own duration");
      assertEquals(JfrEventMapper.epochNanos(gc.getStartTime()), s.epochNanos());
      assertEquals(gc.getString("name"), s.name());
      assertEquals("jvm.gc", s.category());
      assertTrue(s.lane().lane().startsWith("GC"));
      if (gc.getThread() != null) {
        assertEquals(gc.getThread().getOSThreadId(), s.lane().tid(), "on the collecting thread");
      }
      assertTrue(s.args().contains(new Arg("cause", gc.getString("cause"))), s.args().toString());
      assertTrue(s.stack().isEmpty(), "GC events have no stack");
    }
  }

  @Test
  void heapSummariesBecomeCounters() {
    List<RecordedEvent> heap = ofType("jdk.GCHeapSummary");
    assertFalse(heap.isEmpty());
    JfrEventMapper mapper = new JfrEventMapper(CONFIG);
    for (RecordedEvent h : heap) {
      List<JvmEvent> out = mapper.map(h);
      Counter used = (Counter) out.get(0);
      assertEquals("JVM heap used", used.track());
      assertEquals("bytes", used.unit());
      assertEquals((double) h.getLong("heapUsed"), used.value());
      Counter committed = (Counter) out.get(1);
      assertEquals("JVM heap committed", committed.track());
      assertTrue(committed.value() >= used.value() || committed.value() > 0);
    }
  }

  @Test
  void monitorContentionAndParkingLandOnTheBlockedThreadsByTid() {
    List<Slice> slices = mapAll().stream().filter(e -> e instanceof Slice).map(e -> (Slice) e).toList();
    List<Slice> enters = slices.stream().filter(s -> s.name().equals("Monitor enter")
        && s.args().contains(new Arg("monitorClass", JvmWorkload.TestMonitor.class.getName()))).toList();
    assertEquals(1, enters.size(), "one contended enter of the test monitor");
    Slice enter = enters.get(0);
    assertEquals(workload.contenderTid, enter.lane().tid());
    assertEquals("jfr-contender", enter.lane().threadName());
    assertEquals("Locks", enter.lane().lane());
    assertEquals("jvm.locks", enter.category());
    assertTrue(enter.durationNanos() >= 1_000_000, "blocked at least the threshold");
    assertFalse(enter.stack().isEmpty(), "with its stack");
    assertTrue(enter.stack().size() <= CONFIG.stackDepth() + 1, "bounded: " + enter.stack());
    assertTrue(enter.stack().stream().anyMatch(f -> f.contains("JvmWorkload")), enter.stack().toString());

    List<Slice> parks = slices.stream()
        .filter(s -> s.name().equals("Park") && s.lane().tid() == workload.parkerTid).toList();
    assertEquals(3, parks.size());
    for (Slice p : parks) {
      assertTrue(p.durationNanos() >= JvmWorkload.PARK_NANOS - 100_000, "parked " + p.durationNanos());
      assertTrue(p.args().contains(new Arg("timeout", JvmWorkload.PARK_NANOS)), p.args().toString());
    }
  }

  @Test
  void threadStartAndEndAreInstantsOnTheThread() {
    List<JvmEvent.Instant> instants = mapAll().stream().filter(e -> e instanceof JvmEvent.Instant)
        .map(e -> (JvmEvent.Instant) e).filter(i -> i.lane().tid() == workload.parkerTid).toList();
    assertEquals(List.of("Thread start", "Thread end"), instants.stream().map(JvmEvent.Instant::name).toList());
    assertEquals("jfr-parker", instants.get(0).lane().threadName());
  }

  @Test
  void everySliceIsNonNegativeAndNamed() {
    Map<String, Long> counts = new java.util.TreeMap<>();
    for (JvmEvent e : mapAll()) {
      counts.merge(e.getClass().getSimpleName(), 1L, Long::sum);
      if (e instanceof Slice s) {
        assertTrue(s.durationNanos() >= 0);
        assertFalse(s.name().isEmpty());
      }
    }
    assertTrue(counts.getOrDefault("Slice", 0L) > 0 && counts.getOrDefault("Counter", 0L) > 0, counts.toString());
  }

  @Test
  void unknownEventTypesMapToNothing() {
    JfrEventMapper mapper = new JfrEventMapper(CONFIG);
    long unmapped = events.stream().filter(e -> EventGroup.ofEventType(e.getEventType().getName()) == null)
        .filter(e -> !mapper.map(e).isEmpty()).count();
    assertEquals(0, unmapped);
  }

  static List<JvmEvent> mapAll() {
    JfrEventMapper mapper = new JfrEventMapper(CONFIG);
    List<JvmEvent> out = new ArrayList<>();
    for (RecordedEvent e : events) {
      out.addAll(mapper.map(e));
    }
    return out;
  }
}
