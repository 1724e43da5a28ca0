package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.jperfetto.tracing.TraceConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 49: several libraries of one process, each with its own TrackEvent on one producer,
 * recorded through jtraced (the in-process service). Every TrackEvent records in every session
 * whose categories it has, and the category filters pick exactly the right slices, with
 * disjoint and with overlapping categories, in concurrent sessions.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SeveralTrackEventsIT {
  static final int N = 200;

  /**
   * A library: its own TrackEvent, the categories it declares, and how many session starts and
   * stops its TrackEvent has applied.
   */
  record Library(TrackEvent trackEvent, Map<String, Category> categories, AtomicInteger sessionChanges) {
    static Library of(String... categoryNames) {
      Map<String, Category> cats = new LinkedHashMap<>();
      for (String name : categoryNames) {
        cats.put(name, Category.of(name));
      }
      AtomicInteger changes = new AtomicInteger();
      return new Library(TrackEvent.builder().categories(cats.values().toArray(Category[]::new))
          .onSessionsChanged(changes::incrementAndGet).build(), cats, changes);
    }

    /** N slices named sliceName in the category. */
    void slices(String category, String sliceName) {
      Category c = categories.get(category);
      for (int i = 0; i < N; i++) {
        trackEvent.begin(c, sliceName, "i", i);
        trackEvent.end(c);
      }
    }
  }

  static TraceConfig recording(String... categories) {
    return TraceConfigs.builder().bufferSizeKb(4096).trackEvent(categories).build();
  }

  static TracingProducer.Builder producer(String name, Library... libraries) {
    TracingProducer.Builder b = TracingProducer.builder(name);
    for (Library l : libraries) {
      b.dataSource(l.trackEvent().dataSource());
    }
    return b;
  }

  /** Slice begins per name in a recorded trace (the trace read back as trace_processor would). */
  static Map<String, Integer> sliceCounts(byte[] trace) throws Exception {
    DecodedEvents d = InProcessTrackEventIT.decode(trace);
    assertEquals(List.of(), d.errors);
    Map<String, Integer> counts = new TreeMap<>();
    for (DecodedEvents.Event e : d.ofType(Type.TYPE_SLICE_BEGIN)) {
      counts.merge(e.name(), 1, Integer::sum);
    }
    assertEquals(counts.values().stream().mapToInt(Integer::intValue).sum(), d.ofType(Type.TYPE_SLICE_END).size(),
        "every slice ended");
    return counts;
  }

  @Test
  void twoLibrariesWithDisjointCategoriesEachRecordUnderTheirFilter() throws Exception {
    Library a = Library.of("liba");
    Library b = Library.of("libb");
    try (InProcessTracing tracing = InProcessTracing.start(producer("two-libs", a, b))) {
      InProcessSession all = tracing.newSession(recording("*")).start();
      InProcessSession onlyA = tracing.newSession(recording("liba")).start();
      InProcessSession onlyB = tracing.newSession(recording("libb")).start();
      assertEquals(3, a.trackEvent().dataSource().activeInstances(), "an instance per session");
      assertEquals(3, b.trackEvent().dataSource().activeInstances(), "the second library's too");
      a.slices("liba", "a_work");
      b.slices("libb", "b_work");
      for (InProcessSession s : List.of(all, onlyA, onlyB)) {
        s.stop();
      }
      assertEquals(Map.of("a_work", N, "b_work", N), sliceCounts(all.readTrace()));
      assertEquals(Map.of("a_work", N), sliceCounts(onlyA.readTrace()));
      assertEquals(Map.of("b_work", N), sliceCounts(onlyB.readTrace()));
    }
  }

  @Test
  void threeLibrariesWithOverlappingCategoriesEachRecordWhatTheFilterSelects() throws Exception {
    Library a = Library.of("liba", "shared");
    Library b = Library.of("libb", "shared");
    Library c = Library.of("libc");
    try (InProcessTracing tracing = InProcessTracing.start(producer("three-libs", a, b, c))) {
      Map<String, InProcessSession> sessions = new LinkedHashMap<>();
      for (String filter : List.of("*", "shared", "libc", "liba,libc", "lib*")) {
        sessions.put(filter, tracing.newSession(recording(filter.split(","))).start());
      }
      a.slices("liba", "a_work");
      a.slices("shared", "a_shared");
      b.slices("libb", "b_work");
      b.slices("shared", "b_shared");
      c.slices("libc", "c_work");
      for (InProcessSession s : sessions.values()) {
        s.stop();
      }
      assertEquals(Map.of("a_work", N, "a_shared", N, "b_work", N, "b_shared", N, "c_work", N),
          sliceCounts(sessions.get("*").readTrace()));
      assertEquals(Map.of("a_shared", N, "b_shared", N), sliceCounts(sessions.get("shared").readTrace()));
      assertEquals(Map.of("c_work", N), sliceCounts(sessions.get("libc").readTrace()));
      assertEquals(Map.of("a_work", N, "c_work", N), sliceCounts(sessions.get("liba,libc").readTrace()));
      assertEquals(Map.of("a_work", N, "b_work", N, "c_work", N), sliceCounts(sessions.get("lib*").readTrace()));
    }
  }

  @Test
  void aLibraryRegisteredWhileASessionRunsJoinsIt() throws Exception {
    Library a = Library.of("liba");
    Library b = Library.of("libb");
    try (InProcessTracing tracing = InProcessTracing.start(producer("late-lib", a))) {
      InProcessSession s = tracing.newSession(recording("*")).start();
      tracing.producer().register(b.trackEvent().dataSource());
      tracing.producer().sync().get(20, TimeUnit.SECONDS);
      awaitEnabled(b.categories().get("libb"));
      a.slices("liba", "a_work");
      b.slices("libb", "b_work");
      s.stop();
      assertEquals(Map.of("a_work", N, "b_work", N), sliceCounts(s.readTrace()));
    }
  }

  /**
   * A service unregisters by name and stops every instance of it on the producer: the producer
   * registers the remaining namesake again, so it goes on recording in the running session.
   */
  @Test
  void unregisteringOneLibraryLeavesTheOtherRecording() throws Exception {
    Library a = Library.of("liba");
    Library b = Library.of("libb");
    try (InProcessTracing tracing = InProcessTracing.start(producer("unregister", a, b))) {
      InProcessSession s = tracing.newSession(recording("*")).start();
      assertEquals(1, b.sessionChanges().get());
      a.slices("liba", "a_before");
      b.slices("libb", "b_before");
      tracing.producer().unregister(a.trackEvent().dataSource());
      // b: its instance stopped, then a fresh one started (three changes since it began).
      await("a stopped, b on a fresh instance", () -> !a.trackEvent().dataSource().isEnabled()
          && b.sessionChanges().get() == 3 && b.categories().get("libb").isEnabled()
          && b.trackEvent().dataSource().activeInstances() == 1);
      a.slices("liba", "a_after");
      b.slices("libb", "b_after");
      s.stop();
      assertEquals(Map.of("a_before", N, "b_before", N, "b_after", N), sliceCounts(s.readTrace()));
    }
  }

  @Test
  void theSameDataSourceTwiceOnOneProducerIsRefusedAtRegistration() throws Exception {
    Library a = Library.of("liba");
    DataSource<?> ds = a.trackEvent().dataSource();
    TracingProducer.Builder builder = TracingProducer.builder("twice").dataSource(ds);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> builder.dataSource(ds));
    assertTrue(e.getMessage().contains("\"track_event\"") && e.getMessage().contains("twice"), e.getMessage());
    try (InProcessTracing tracing = InProcessTracing.start(builder)) {
      assertThrows(IllegalArgumentException.class, () -> tracing.producer().register(ds));
      Library other = Library.of("liba"); // another TrackEvent with the same category: legal
      tracing.producer().register(other.trackEvent().dataSource());
      InProcessSession s = tracing.newSession(recording("liba")).start();
      assertEquals(1, ds.activeInstances(), "refused registration left no second instance");
      a.slices("liba", "a_work");
      other.slices("liba", "other_work");
      s.stop();
      assertEquals(Map.of("a_work", N, "other_work", N), sliceCounts(s.readTrace()));
    }
  }

  static void awaitEnabled(Category c) throws InterruptedException {
    await("category " + c.name() + " enabled", c::isEnabled);
  }

  static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "never: " + what);
      Thread.sleep(5);
    }
  }
}
