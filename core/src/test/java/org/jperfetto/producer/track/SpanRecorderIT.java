package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Operations written when they end, read back from a real producer connection. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpanRecorderIT {
  final Category spans = Category.of("spans");
  final Category other = Category.of("other");
  static final long MS = 1_000_000;

  @TempDir
  Path dir;

  /** A span made of plain values. */
  record Op(String name, long startNanos, long endNanos, Thread startThread, boolean failed, long flow,
      List<String> events, List<Long> eventTimes) implements SpanRecorder.Span {
    static Op of(String name, long start, long end, Thread thread) {
      return new Op(name, start, end, thread, false, 0, List.of(), List.of());
    }

    @Override
    public void writeArgs(EventContext event) {
      event.arg("op", name);
      if (flow != 0) {
        event.flow(flow);
      }
    }

    @Override
    public int eventCount() {
      return events.size();
    }

    @Override
    public long eventNanos(int index) {
      return eventTimes.get(index);
    }

    @Override
    public String eventName(int index) {
      return events.get(index);
    }

    @Override
    public void writeEventArgs(int index, EventContext event) {
      event.arg("index", (long) index);
    }
  }

  @Test
  void boundedTextIsCutBeforeASplitSurrogatePair() {
    assertEquals(null, SpanRecorder.bounded(null, 4));
    assertEquals("abcd", SpanRecorder.bounded("abcd", 4));
    assertEquals("abcd", SpanRecorder.bounded("abcdef", 4));
    assertEquals("abc", SpanRecorder.bounded("abc\ud83d\ude00", 4), "not half an emoji");
    assertEquals("ab\ud83d\ude00", SpanRecorder.bounded("ab\ud83d\ude00z", 4), "a whole pair stays");
  }

  @Test
  void anOperationOfOneThreadIsASliceOnItsTrackNestedByTimeWithItsEvents() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, spans)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      SpanRecorder recorder = new SpanRecorder(f.trackEvent, spans, "lanes");
      Thread me = Thread.currentThread();
      long t = System.nanoTime();
      // The child ends (and is written) first; the parent, written later, began before it.
      assertTrue(recorder.record(new Op("child", t - 8 * MS, t - 6 * MS, me, true, 7,
          List.of("retry", "late"), List.of(t - 7 * MS, t + 50 * MS))));
      assertTrue(recorder.record(Op.of("parent", t - 10 * MS, t - 1 * MS, me)));
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      DecodedEvents.Event child = d.named("child").get(0);
      DecodedEvents.Event parent = d.named("parent").get(0);
      assertEquals(Type.TYPE_SLICE_BEGIN, child.type());
      assertEquals(t - 8 * MS, child.timestamp());
      assertEquals(t - 10 * MS, parent.timestamp());
      assertEquals(child.trackUuid(), parent.trackUuid(), "both on the thread's track");
      assertTrue(d.tracks.get(child.trackUuid()).hasThread(), "a thread's track, not a lane");
      assertEquals("child", child.args().get("op"));
      assertEquals(Boolean.TRUE, child.args().get("error"));
      assertEquals(List.of(7L), child.flows());
      assertEquals(null, parent.args().get("error"));
      assertEquals(t - 7 * MS, d.named("retry").get(0).timestamp());
      assertEquals(0L, d.named("retry").get(0).args().get("index"));
      assertEquals(t - 6 * MS, d.named("late").get(0).timestamp(), "an event after the end is pulled in");
      assertEquals(t - 6 * MS, d.named(SpanRecorder.ERROR_INSTANT).get(0).timestamp());
      List<Long> ends = d.ofType(Type.TYPE_SLICE_END).stream().map(DecodedEvents.Event::timestamp).toList();
      assertEquals(List.of(t - 6 * MS, t - 1 * MS), ends);
    }
  }

  @Test
  void operationsAcrossThreadsTakeTheFirstLaneFreeOverTheirTime() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, spans)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      SpanRecorder recorder = new SpanRecorder(f.trackEvent, spans, "lanes");
      Thread elsewhere = new Thread(() -> { });
      long t = System.nanoTime();
      recorder.record(Op.of("a", t - 10 * MS, t - 5 * MS, elsewhere));
      recorder.record(Op.of("b", t - 8 * MS, t - 2 * MS, elsewhere));
      recorder.record(Op.of("c", t - 4 * MS, t - 1 * MS, elsewhere));
      recorder.record(Op.of("d", t - 5 * MS, t - 3 * MS, elsewhere));
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      long a = d.named("a").get(0).trackUuid();
      long b = d.named("b").get(0).trackUuid();
      assertEquals(a, d.named("c").get(0).trackUuid(), "c starts after a ended");
      assertTrue(a != b, "b overlaps a");
      long third = d.named("d").get(0).trackUuid();
      assertTrue(third != a && third != b, "d overlaps c (on a's lane) and b");
      assertEquals(3, recorder.laneCount());
      for (long uuid : List.of(a, b, third)) {
        assertEquals("lanes", d.tracks.get(uuid).getStaticName());
      }
      List<DecodedEvents.Event> aEvents = d.events.stream().filter(e -> e.trackUuid() == a).toList();
      assertEquals(List.of(Type.TYPE_SLICE_BEGIN, Type.TYPE_SLICE_END, Type.TYPE_SLICE_BEGIN, Type.TYPE_SLICE_END),
          aEvents.stream().map(DecodedEvents.Event::type).toList());
      assertEquals(List.of(t - 10 * MS, t - 5 * MS, t - 4 * MS, t - MS),
          aEvents.stream().map(DecodedEvents.Event::timestamp).toList());
    }
  }

  @Test
  void whatTheStoppingListenerRecordsReachesTheStoppingSession() throws Exception {
    Category cat = Category.of("closing");
    TrackEvent[] te = new TrackEvent[1];
    int[] sessionsSeen = new int[1];
    te[0] = TrackEvent.builder().categories(cat).processName("closing_app").onSessionStopping(() -> {
      sessionsSeen[0] = te[0].activeSessions();
      new SpanRecorder(te[0], cat, "lanes").record(Op.of("closed at stop", System.nanoTime() - MS, System.nanoTime(),
          new Thread(() -> { })));
      te[0].flush();
    }).build();
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("closing-app").dataSource(te[0].dataSource()))) {
      InProcessSession s = tracing.newSession(InProcessTrackEventIT.config()).start();
      assertEquals(1, te[0].activeSessions());
      s.stop();
      assertEquals(0, te[0].activeSessions());
      assertEquals(1, sessionsSeen[0], "the stopping session still counts");
      DecodedEvents d = InProcessTrackEventIT.decode(s.readTrace());
      assertEquals(List.of(), d.errors);
      assertEquals(1, d.named("closed at stop").size());
      assertEquals("lanes", d.tracks.get(d.named("closed at stop").get(0).trackUuid()).getStaticName());
    }
  }

  @Test
  void withoutASessionForItsCategoryNothingIsWritten() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, spans, other)) {
      f.start(1, TrackEventConfig.newBuilder().addDisabledCategories("spans").build());
      SpanRecorder recorder = new SpanRecorder(f.trackEvent, spans, "lanes");
      assertFalse(recorder.isEnabled());
      long t = System.nanoTime();
      assertTrue(recorder.record(Op.of("hidden", t - MS, t, new Thread(() -> { }))));
      assertEquals(0, recorder.laneCount());
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.named("hidden"));
    }
  }
}
