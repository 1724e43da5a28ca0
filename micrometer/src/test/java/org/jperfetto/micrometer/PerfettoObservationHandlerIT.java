package org.jperfetto.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.tracing.InProcessSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Observations through the handler into a real in-process session, the trace read back: where each
 * slice lands (thread track or async track), how it nests, its name, arguments, events, errors and
 * flows.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PerfettoObservationHandlerIT {
  ObservationTracing t;

  @BeforeEach
  void start() throws Exception {
    t = new ObservationTracing();
  }

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void nestedObservationsOfOneThreadAreNestedSlicesOnItsTrack() throws Exception {
    InProcessSession session = t.session();
    Observation outer = Observation.start("http.server.requests", t.registry).contextualName("GET /orders");
    try (Observation.Scope _ = outer.openScope()) {
      Observation inner = Observation.createNotStarted("db.query", t.registry).start(); // parent: outer, current
      inner.stop();
    }
    outer.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event outerBegin = trace.begin("GET /orders");
    RecordedTrace.Event innerBegin = trace.begin("db.query");
    assertEquals(List.of(PerfettoObservationHandler.CATEGORY), outerBegin.categories());
    assertEquals("http.server.requests", outerBegin.args().get(ObservationRecord.NAME_ARG),
        "the contextual name is the slice's, the name an argument");
    assertNull(innerBegin.args().get(ObservationRecord.NAME_ARG), "no contextual name: the name is the slice's");
    assertEquals(outerBegin.track(), innerBegin.track());
    assertEquals(Thread.currentThread().getName(), trace.trackName(outerBegin.track()), "the thread's own track");
    RecordedTrace.Event innerEnd = trace.endOf(innerBegin);
    RecordedTrace.Event outerEnd = trace.endOf(outerBegin);
    assertTrue(outerBegin.timestamp() <= innerBegin.timestamp() && innerBegin.timestamp() <= innerEnd.timestamp()
        && innerEnd.timestamp() <= outerEnd.timestamp(), "inner within outer");
    assertTrue(outerBegin.flows().isEmpty() && innerBegin.terminatingFlows().isEmpty(), "one thread: no arrow");
  }

  @Test
  void lowAndHighCardinalityKeyValuesAreArguments() throws Exception {
    InProcessSession session = t.session();
    Observation.createNotStarted("rpc", t.registry)
        .lowCardinalityKeyValue("method", "GET")
        .lowCardinalityKeyValue("status", "200")
        .highCardinalityKeyValue("uri", "/orders/42")
        .observe(() -> { });
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    assertEquals(Map.of("method", "GET", "status", "200", "uri", "/orders/42"), trace.begin("rpc").args());
  }

  @Test
  void keyValuesSetWhileItRunsAreWrittenToo() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.start("job", t.registry);
    o.highCardinalityKeyValue("rows", "17");
    o.stop();
    RecordedTrace trace = ObservationTracing.stop(session);
    assertEquals("17", trace.begin("job").args().get("rows"));
  }

  @Test
  void absurdKeyValueCountsAndSizesAreCutAndCounted() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.createNotStarted("wide", t.registry);
    int extra = 1000;
    for (int i = 0; i < ObservationRecord.MAX_KEY_VALUES + extra; i++) {
      o.highCardinalityKeyValue("k" + i, "v" + i);
    }
    o.lowCardinalityKeyValue("huge", "x".repeat(1 << 20));
    o.observe(() -> { });
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    Map<String, Object> args = trace.begin("wide").args();
    assertEquals((long) extra + 1, args.get(ObservationRecord.DROPPED_KEY_VALUES_ARG), "the ones cut, counted");
    assertEquals(ObservationRecord.MAX_KEY_VALUES + 1, args.size(), "at most the cap, and the count");
    assertEquals(ObservationRecord.MAX_TEXT_CHARS, ((String) args.get("huge")).length(), "a value cut to size");
    assertEquals("v0", args.get("k0"));
  }

  @Test
  void aFailedObservationCarriesItsErrorAndAMarkAtItsEnd() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.start("payment", t.registry);
    o.error(new IllegalStateException("card declined"));
    o.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event begin = trace.begin("payment");
    assertEquals(true, begin.args().get("error"));
    assertEquals("java.lang.IllegalStateException: card declined", begin.args().get(ObservationRecord.EXCEPTION_ARG));
    List<RecordedTrace.Event> marks = trace.named("error");
    assertEquals(1, marks.size());
    assertEquals(Type.TYPE_INSTANT, marks.get(0).type());
    assertEquals(begin.track(), marks.get(0).track());
    assertEquals(trace.endOf(begin).timestamp(), marks.get(0).timestamp(), "the mark is at the end");
  }

  @Test
  void eventsAreInstantsOnTheSliceTrackWhenTheyHappened() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.start("upload", t.registry);
    long before = System.nanoTime();
    o.event(Observation.Event.of("chunk.sent", "first chunk sent"));
    o.event(Observation.Event.of("retry"));
    long after = System.nanoTime();
    o.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event begin = trace.begin("upload");
    RecordedTrace.Event first = trace.named("first chunk sent").get(0);
    RecordedTrace.Event retry = trace.named("retry").get(0);
    for (RecordedTrace.Event e : List.of(first, retry)) {
      assertEquals(Type.TYPE_INSTANT, e.type());
      assertEquals(begin.track(), e.track());
      assertTrue(e.timestamp() >= before && e.timestamp() <= after, "at the time it was signalled");
    }
    assertTrue(first.timestamp() <= retry.timestamp());
  }

  @Test
  void absurdEventCountsAreCutAndCounted() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.start("chatty", t.registry);
    int extra = 500;
    for (int i = 0; i < ObservationRecord.MAX_EVENTS + extra; i++) {
      o.event(Observation.Event.of("tick"));
    }
    o.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    assertEquals(ObservationRecord.MAX_EVENTS, trace.named("tick").size());
    assertEquals((long) extra, trace.begin("chatty").args().get(ObservationRecord.DROPPED_EVENTS_ARG));
  }

  @Test
  void aChildOnAnotherThreadIsOnItsTrackWithAFlowFromItsParent() throws Exception {
    InProcessSession session = t.session();
    Observation parent = Observation.start("request", t.registry);
    Thread worker = Thread.ofPlatform().name("mm-worker").start(() ->
        Observation.createNotStarted("work", t.registry).parentObservation(parent).observe(() -> { }));
    worker.join();
    parent.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event parentBegin = trace.begin("request");
    RecordedTrace.Event childBegin = trace.begin("work");
    assertEquals("mm-worker", trace.trackName(childBegin.track()), "the child on the worker thread's track");
    assertNotEquals(parentBegin.track(), childBegin.track());
    assertEquals(1, parentBegin.flows().size());
    assertEquals(parentBegin.flows(), childBegin.terminatingFlows(), "an arrow from the parent to the child");
  }

  @Test
  void anObservationStoppedOnAnotherThreadIsOnTheAsyncTrack() throws Exception {
    InProcessSession session = t.session();
    Observation parent = Observation.start("checkout", t.registry);
    Observation async;
    try (Observation.Scope _ = parent.openScope()) {
      async = Observation.start("send-mail", t.registry); // its parent is the current one, on this thread
      async.event(Observation.Event.of("queued"));
    }
    CompletableFuture.runAsync(() -> {
      async.highCardinalityKeyValue("to", "a@example.com");
      async.stop();
    }).get(10, TimeUnit.SECONDS);
    parent.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event asyncBegin = trace.begin("send-mail");
    RecordedTrace.Event parentBegin = trace.begin("checkout");
    assertEquals(PerfettoObservationHandler.ASYNC_TRACK, trace.trackName(asyncBegin.track()));
    assertEquals(Thread.currentThread().getName(), trace.trackName(parentBegin.track()));
    assertEquals("a@example.com", asyncBegin.args().get("to"));
    assertEquals(asyncBegin.track(), trace.named("queued").get(0).track(), "its events on its track");
    assertTrue(trace.endOf(asyncBegin).timestamp() >= asyncBegin.timestamp());
    assertEquals(parentBegin.flows(), asyncBegin.terminatingFlows(), "linked to its parent");
    assertEquals(1, asyncBegin.terminatingFlows().size());
  }

  @Test
  void observationsOfManyThreadsAtOnceAreAllRecorded() throws Exception {
    InProcessSession session = t.session();
    int threads = 4;
    int each = 200;
    Thread[] workers = new Thread[threads];
    for (int w = 0; w < threads; w++) {
      workers[w] = Thread.ofPlatform().name("mm-" + w).start(() -> {
        for (int i = 0; i < each; i++) {
          Observation.createNotStarted("op", t.registry).lowCardinalityKeyValue("i", Integer.toString(i))
              .observe(() -> Observation.createNotStarted("step", t.registry).observe(() -> { }));
        }
      });
    }
    for (Thread w : workers) {
      w.join();
    }
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    long ops = trace.events.stream().filter(e -> "op".equals(e.name()) && e.type() == Type.TYPE_SLICE_BEGIN).count();
    long steps = trace.events.stream().filter(e -> "step".equals(e.name()) && e.type() == Type.TYPE_SLICE_BEGIN)
        .count();
    assertEquals(threads * each, ops);
    assertEquals(threads * each, steps);
    assertEquals(2L * threads * each, trace.events.stream().filter(e -> e.type() == Type.TYPE_SLICE_END).count());
    assertTrue(trace.events.stream().allMatch(e -> e.flows().isEmpty()), "one thread each: no arrows");
  }

  @Test
  void anObservationNeverStoppedIsClosedAndMarkedAtTheSessionStop() throws Exception {
    InProcessSession session = t.session();
    Observation.start("leaked", t.registry).event(Observation.Event.of("started"));
    Observation done = Observation.start("done", t.registry);
    done.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event leaked = trace.begin("leaked");
    assertEquals(true, leaked.args().get(ObservationRecord.UNFINISHED_ARG));
    assertEquals(PerfettoObservationHandler.ASYNC_TRACK, trace.trackName(leaked.track()),
        "closed by the producer's thread, so on the async track");
    assertTrue(trace.endOf(leaked).timestamp() >= trace.endOf(trace.begin("done")).timestamp());
    assertEquals(leaked.track(), trace.named("started").get(0).track());
    assertFalse(trace.begin("done").args().containsKey(ObservationRecord.UNFINISHED_ARG));
  }

  @Test
  void observationsOnVirtualThreadsAreSlicesOnTheirOwnTracks() throws Exception {
    InProcessSession session = t.session();
    Thread v = Thread.ofVirtual().name("mm-virtual").start(() ->
        Observation.createNotStarted("v.outer", t.registry).observe(() ->
            Observation.createNotStarted("v.inner", t.registry).observe(() -> { })));
    v.join();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event outer = trace.begin("v.outer");
    RecordedTrace.Event inner = trace.begin("v.inner");
    assertEquals("mm-virtual", trace.trackName(outer.track()), "the virtual thread's track");
    assertEquals(outer.track(), inner.track());
    assertTrue(outer.timestamp() <= inner.timestamp()
        && trace.endOf(inner).timestamp() <= trace.endOf(outer).timestamp());
  }

  @Test
  void observationsPilingUpUnstoppedAreCappedAndCounted() throws Exception {
    int cap = 100;
    try (ObservationTracing small = new ObservationTracing(new PerfettoObservationHandler(null, cap))) {
      InProcessSession session = small.session();
      int extra = 10;
      List<Observation> started = new ArrayList<>();
      for (int i = 0; i < cap + extra; i++) {
        started.add(Observation.start("pile", small.registry));
      }
      assertEquals(extra, small.handler.dropped(), "the ones beyond the cap are not recorded");
      assertNull(started.get(started.size() - 1).getContext().get(ObservationRecord.KEY));
      started.forEach(Observation::stop);
      Observation next = Observation.start("next", small.registry);
      assertTrue(next.getContext().get(ObservationRecord.KEY) != null, "recorded again once they stopped");
      next.stop();
      RecordedTrace trace = ObservationTracing.stop(session);

      assertEquals(List.of(), trace.errors);
      assertEquals(cap, trace.events.stream().filter(e -> "pile".equals(e.name())).count());
      trace.begin("next");
      assertEquals(extra, small.handler.dropped());
    }
  }

  @Test
  void anObservationStartedWithoutASessionIsNotRecordedNorKept() throws Exception {
    Observation before = Observation.start("before", t.registry);
    assertNull(before.getContext().get(ObservationRecord.KEY), "nothing kept without a session");
    InProcessSession session = t.session();
    before.stop();
    Observation.createNotStarted("during", t.registry).observe(() -> { });
    RecordedTrace trace = ObservationTracing.stop(session);
    Observation after = Observation.start("after", t.registry);
    after.stop();

    assertEquals(List.of(), trace.errors);
    assertTrue(trace.named("before").isEmpty(), "it started before the session");
    trace.begin("during"); // exactly one
    assertNull(after.getContext().get(ObservationRecord.KEY));
    assertEquals(0, t.handler.dropped());
  }

  /**
   * Observations of random junk (any chars, lone surrogates included, names and values up to 5000
   * long, up to 200 key values and 100 events each, errors with such messages): every one is a
   * readable slice within the bounds.
   */
  @Test
  void observationsOfRandomJunkMakeAWellFormedTrace() throws Exception {
    java.util.Random random = new java.util.Random(43);
    // A plain registry: the test registry's validator takes a stack trace per callback, too slow here.
    ObservationRegistry registry = ObservationRegistry.create();
    registry.observationConfig().observationHandler(t.handler);
    InProcessSession session = t.session(64 * 1024); // room for all of it (a few MB), so the ring never wraps
    int n = 60;
    for (int i = 0; i < n; i++) {
      Observation o = Observation.createNotStarted(junk(random, 1 + random.nextInt(100)), registry);
      if (random.nextBoolean()) {
        o.contextualName(junk(random, random.nextInt(5000)));
      }
      for (int k = random.nextInt(200); k > 0; k--) {
        String key = junk(random, 1 + random.nextInt(50));
        String value = junk(random, random.nextInt(random.nextInt(10) == 0 ? 5000 : 20));
        if (random.nextBoolean()) {
          o.lowCardinalityKeyValue(key, value);
        } else {
          o.highCardinalityKeyValue(key, value);
        }
      }
      o.start();
      for (int e = random.nextInt(100); e > 0; e--) {
        o.event(Observation.Event.of(junk(random, 1 + random.nextInt(300)), junk(random, random.nextInt(2000))));
      }
      if (random.nextInt(4) == 0) {
        o.error(new IllegalArgumentException(junk(random, random.nextInt(3000))));
      }
      o.stop();
    }
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    List<RecordedTrace.Event> begins = trace.events.stream().filter(e -> e.type() == Type.TYPE_SLICE_BEGIN).toList();
    assertEquals(n, begins.size());
    assertEquals(n, trace.events.stream().filter(e -> e.type() == Type.TYPE_SLICE_END).count());
    for (RecordedTrace.Event b : begins) {
      assertTrue(b.name().length() <= ObservationRecord.MAX_TEXT_CHARS, "name cut");
      assertTrue(b.args().size() <= ObservationRecord.MAX_KEY_VALUES + 6, "key values capped: " + b.args().size());
      trace.endOf(b);
    }
    assertTrue(trace.events.stream().filter(e -> e.type() == Type.TYPE_INSTANT)
        .allMatch(e -> e.name().length() <= ObservationRecord.MAX_TEXT_CHARS));
  }

  /** length chars drawn from the whole UTF-16 range (lone surrogates, NUL and controls too). */
  private static String junk(java.util.Random random, int length) {
    char[] chars = new char[length];
    for (int i = 0; i < length; i++) {
      chars[i] = (char) (random.nextInt(8) == 0 ? random.nextInt(0x10000) : 0x20 + random.nextInt(0x5f));
    }
    return new String(chars);
  }

  @Test
  void keyValuesWithOddContentsStillMakeAWellFormedTrace() throws Exception {
    InProcessSession session = t.session();
    Observation o = Observation.createNotStarted("\u00e9t\u00e9 \ud83d\ude00", t.registry)
        .contextualName("x".repeat(ObservationRecord.MAX_TEXT_CHARS - 1) + "\ud83d\ude00");
    o.highCardinalityKeyValue(KeyValue.of("empty", ""));
    o.highCardinalityKeyValue(KeyValue.of("nul", "a\u0000b"));
    o.start();
    o.error(new RuntimeException((String) null));
    o.stop();
    RecordedTrace trace = ObservationTracing.stop(session);

    assertEquals(List.of(), trace.errors);
    RecordedTrace.Event begin = trace.events.stream().filter(e -> e.type() == Type.TYPE_SLICE_BEGIN)
        .findFirst().orElseThrow();
    assertEquals("x".repeat(ObservationRecord.MAX_TEXT_CHARS - 1), begin.name(), "cut before a split surrogate pair");
    assertEquals("", begin.args().get("empty"));
    assertEquals("a\u0000b", begin.args().get("nul"));
    assertEquals("java.lang.RuntimeException", begin.args().get(ObservationRecord.EXCEPTION_ARG));
  }
}
