package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.stream.LongStream;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.protos.TrackEventConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Every TrackEvent feature through a real producer connection, read back and decoded. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TrackEventIT {
  // A category belongs to one TrackEvent: each test makes its own.
  final Category APP = Category.of("app");
  final Category IO = Category.described("io", "disk and network");
  final Category SLOW = Category.of("app.slow", "slow");
  final Category OFF = Category.of("noisy");
  static final Track QUEUE = Track.named("queue");
  static final Track BYTES = Track.counter("bytes", Track.Unit.SIZE_BYTES);
  static final Track LOAD = Track.counter("load");

  @TempDir
  Path dir;

  @Test
  void everyFeatureAppearsInTheReadBackTrace() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP, IO, SLOW, OFF)) {
      f.start(1, TrackEventConfig.newBuilder().addDisabledCategories("noisy").build());
      TrackEvent te = f.trackEvent;
      assertTrue(APP.isEnabled());
      assertFalse(SLOW.isEnabled(), "a category tagged slow is off by default");
      assertFalse(OFF.isEnabled(), "disabled by the config");
      Category dynamic = te.dynamicCategory("dyn.cat");
      assertTrue(dynamic.isEnabled());

      te.begin(APP, "outer", "i", 7);
      try (var _ = te.slice(IO, "inner", ev -> ev.arg("path", "/tmp/x").arg("ok", true).flow(42))) {
        te.instant(APP, "two-args", "a", 1, "b", -2);
        te.instant(SLOW, "never");
        te.instant(OFF, "never");
      }
      te.end(APP);
      te.instant(APP, "nested", ev -> ev.arg("ratio", 0.5)
          .beginDict("cfg").arg("lazy", false).arg("n", 3L).beginArray("xs").add(1L).add("two").add(3.0).end().end());
      te.counter(APP, BYTES, 4096L);
      te.counter(APP, LOAD, 0.75);
      te.counter(APP, BYTES, 8192L);
      te.begin(APP, QUEUE, "job");
      te.end(APP, QUEUE);
      te.instant(dynamic, "dyn", ev -> ev.terminatingFlow(42));
      DecodedEvents d = f.finish();

      assertEquals(List.of(), d.errors);
      assertTrue(d.named("never").isEmpty(), "disabled categories write nothing");

      // slices nest on the thread track: outer { inner { two-args } }
      long threadTrack = d.named("outer").get(0).trackUuid();
      Deque<String> stack = new ArrayDeque<>();
      StringBuilder shape = new StringBuilder();
      for (DecodedEvents.Event e : d.events) {
        if (e.trackUuid() != threadTrack) {
          continue;
        }
        switch (e.type()) {
          case TYPE_SLICE_BEGIN -> {
            shape.append('(').append(e.name());
            stack.push(e.name());
          }
          case TYPE_SLICE_END -> {
            shape.append(')');
            stack.pop();
          }
          case TYPE_INSTANT -> shape.append('[').append(e.name()).append(']');
          default -> { }
        }
      }
      assertEquals("(outer(inner[two-args]))[nested][dyn][" + TrackEventFixture.DONE + "0]", shape.toString());
      assertTrue(stack.isEmpty());

      DecodedEvents.Event outer = d.named("outer").get(0);
      assertEquals(List.of("app"), outer.categories());
      assertEquals(Map.of("i", 7L), outer.args());
      DecodedEvents.Event inner = d.named("inner").get(0);
      assertEquals(List.of("io"), inner.categories());
      assertEquals(Map.of("path", "/tmp/x", "ok", true), inner.args());
      assertEquals(Map.of("a", 1L, "b", -2L), d.named("two-args").get(0).args());
      Map<String, Object> nested = d.named("nested").get(0).args();
      assertEquals(0.5, nested.get("ratio"));
      assertEquals(Map.of("lazy", false, "n", 3L, "xs", List.of(1L, "two", 3.0)), nested.get("cfg"));
      assertEquals(List.of("dyn.cat"), d.named("dyn").get(0).categories());
      // timestamps rise along the sequence
      long last = 0;
      for (DecodedEvents.Event e : d.events) {
        assertTrue(e.timestamp() >= last, "timestamps in order: " + e);
        last = e.timestamp();
      }
      assertTrue(outer.timestamp() > 1_000_000, "absolute monotonic nanoseconds, not bare deltas");

      // flows: the same id on the slice and on the terminating instant
      assertEquals(List.of(42L), inner.flows());
      assertEquals(List.of(42L), d.named("dyn").get(0).terminatingFlows());

      // counters on their own tracks, with their values
      List<DecodedEvents.Event> counters = d.ofType(Type.TYPE_COUNTER);
      assertEquals(3, counters.size());
      assertEquals(BYTES.uuid(), counters.get(0).trackUuid());
      assertEquals(4096L, counters.get(0).counter());
      assertEquals(0.75, counters.get(1).doubleCounter());
      assertEquals(LOAD.uuid(), counters.get(1).trackUuid());
      assertEquals(8192L, counters.get(2).counter());
      assertTrue(counters.get(0).categories().isEmpty(), "counters carry no category, as upstream");

      // tracks: thread -> process, counter and named tracks under the process
      TrackDescriptor thread = d.tracks.get(threadTrack);
      assertNotNull(thread);
      assertEquals(ProcessHandle.current().pid(), thread.getThread().getPid());
      assertEquals(ProcessInfo.currentTid(), thread.getThread().getTid());
      assertEquals(Thread.currentThread().getName(), thread.getThread().getThreadName());
      TrackDescriptor process = d.tracks.get(thread.getParentUuid());
      assertEquals("track_test", process.getProcess().getProcessName());
      assertEquals(ProcessHandle.current().pid(), process.getProcess().getPid());
      TrackDescriptor bytes = d.tracks.get(BYTES.uuid());
      assertEquals("bytes", bytes.getStaticName());
      assertEquals(process.getUuid(), bytes.getParentUuid());
      assertEquals(org.jperfetto.protos.CounterDescriptor.Unit.UNIT_SIZE_BYTES, bytes.getCounter().getUnit());
      assertTrue(d.tracks.get(LOAD.uuid()).hasCounter());
      assertEquals("queue", d.tracks.get(QUEUE.uuid()).getStaticName());
      assertEquals(QUEUE.uuid(), d.named("job").get(0).trackUuid());
      List<DecodedEvents.Event> queueEvents = d.events.stream().filter(e -> e.trackUuid() == QUEUE.uuid()).toList();
      assertEquals(List.of(Type.TYPE_SLICE_BEGIN, Type.TYPE_SLICE_END),
          queueEvents.stream().map(e -> e.type()).toList());
    }
  }

  @Test
  void eventsAtGivenTimesKeepThoseTimesEvenBeforeTheSequencesLastEvent() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      TrackEvent te = f.trackEvent;
      long t0 = System.nanoTime();
      te.instant(APP, "now");
      // A slice recorded after the fact, as a span is when it ends: its begin lies before the
      // sequence's last event, so it cannot be a delta on the incremental clock.
      te.beginAt(t0 - 5_000_000, APP, "earlier", ev -> ev.arg("k", 1L));
      te.endAt(t0 - 1_000_000, APP, null);
      te.beginAt(t0 - 4_000_000, APP, QUEUE, "queued", null);
      te.instantAt(t0 - 3_000_000, APP, QUEUE, "mark", ev -> ev.arg("n", 2L));
      te.endAt(t0 - 2_000_000, APP, QUEUE, ev -> ev.arg("done", true));
      te.instantAt(t0 + 1_000, APP, null, "later", null);
      te.instant(APP, "after");
      DecodedEvents d = f.finish();
      assertEquals(t0 - 5_000_000, d.named("earlier").get(0).timestamp());
      assertEquals(1L, d.named("earlier").get(0).args().get("k"));
      List<DecodedEvents.Event> ends = d.ofType(Type.TYPE_SLICE_END);
      assertEquals(List.of(t0 - 1_000_000, t0 - 2_000_000), ends.stream().map(DecodedEvents.Event::timestamp).toList());
      assertEquals(Boolean.TRUE, ends.get(1).args().get("done"));
      assertEquals(QUEUE.uuid(), ends.get(1).trackUuid());
      assertEquals(t0 - 4_000_000, d.named("queued").get(0).timestamp());
      assertEquals(QUEUE.uuid(), d.named("mark").get(0).trackUuid());
      assertEquals(t0 - 3_000_000, d.named("mark").get(0).timestamp());
      assertEquals(t0 + 1_000, d.named("later").get(0).timestamp());
      assertTrue(d.named("after").get(0).timestamp() >= d.named("now").get(0).timestamp(),
          "the incremental clock goes on from the sequence's last current time");
      assertEquals(List.of(), d.errors);
    }
  }

  @Test
  void firstPacketClearsStateSetsDefaultsAndTiesTheClockToMonotonic() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      f.trackEvent.instant(APP, "x");
      f.finish();
      List<TrackTestHost.Packet> packets = f.host.packets();
      TracePacket first = packets.get(0).packet();
      assertEquals(TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE, first.getSequenceFlags());
      assertEquals(TrackEventEncoder.CLOCK_ID_INCREMENTAL, first.getTracePacketDefaults().getTimestampClockId());
      assertTrue(first.getTracePacketDefaults().getTrackEventDefaults().getTrackUuid() != 0);
      var clocks = first.getClockSnapshot().getClocksList();
      assertEquals(2, clocks.size());
      assertEquals(org.jperfetto.protos.BuiltinClock.BUILTIN_CLOCK_MONOTONIC_VALUE, clocks.get(0).getClockId());
      assertEquals(64, clocks.get(1).getClockId());
      assertTrue(clocks.get(1).getIsIncremental());
      assertEquals(1, clocks.get(1).getUnitMultiplierNs());
      assertEquals(clocks.get(0).getTimestamp(), clocks.get(1).getTimestamp());
      long now = System.nanoTime();
      assertTrue(clocks.get(0).getTimestamp() <= now && clocks.get(0).getTimestamp() > now - 60_000_000_000L,
          "the snapshot is System.nanoTime (CLOCK_MONOTONIC)");
      for (TrackTestHost.Packet p : packets.subList(1, packets.size())) {
        assertEquals(TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE, p.packet().getSequenceFlags(),
            "later packets need the state: " + p.packet());
      }
    }
  }

  @Test
  void absoluteTimestampsWhenTheConfigDisablesIncrementalOnes() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.newBuilder().setDisableIncrementalTimestamps(true).build());
      long before = System.nanoTime();
      f.trackEvent.instant(APP, "x");
      DecodedEvents d = f.finish();
      TracePacket first = f.host.packets().get(0).packet();
      assertEquals(TrackEventEncoder.CLOCK_ID_MONOTONIC, first.getTracePacketDefaults().getTimestampClockId());
      assertFalse(first.hasClockSnapshot());
      long ts = d.named("x").get(0).timestamp();
      assertTrue(ts >= before && ts <= System.nanoTime(), "absolute nanoTime: " + ts);
    }
  }

  @Test
  void clearIncrementalStateStartsANewStateAndReinterns() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      f.trackEvent.begin(APP, "before", "k", 1);
      f.trackEvent.end(APP);
      f.host.clearIncrementalState(1);
      DecodedEvents d;
      int round = 0;
      do {
        f.trackEvent.begin(APP, "after", "k", round++);
        f.trackEvent.end(APP);
        d = f.finish();
      } while (d.clearedCount.values().stream().mapToInt(Integer::intValue).sum() < 2);
      assertEquals(List.of(), d.errors, "every iid resolves within its incremental state");
      DecodedEvents.Event last = d.named("after").get(d.named("after").size() - 1);
      assertEquals(List.of("app"), last.categories());
      assertEquals(Map.of("k", (long) round - 1), last.args());
      // the reset re-sent the thread and process descriptors
      long threadTrackPackets = f.host.packets().stream()
          .filter(p -> p.packet().getTrackDescriptor().hasThread()).count();
      assertTrue(threadTrackPackets >= 2, "thread descriptor again after the clear: " + threadTrackPackets);
    }
  }

  @Test
  void configEnablesAndDisablesByNamePatternAndTag() throws Exception {
    Category a = Category.of("net.http");
    Category b = Category.of("net.dns");
    Category c = Category.of("gpu", "debug");
    Category d = Category.of("ui");
    try (TrackEventFixture f = new TrackEventFixture(dir, a, b, c, d)) {
      f.start(1, TrackEventConfig.newBuilder().addDisabledCategories("*").addEnabledCategories("net.*")
          .addDisabledCategories("net.dns").addEnabledTags("debug").build());
      assertTrue(a.isEnabled());
      assertFalse(b.isEnabled(), "an exact disabled name beats a pattern");
      assertTrue(c.isEnabled(), "enabled tag beats the wildcard");
      assertFalse(d.isEnabled());
      f.host.stopDataSource(1);
      TrackTestHost.await("categories off after stop", () -> !a.isEnabled() && !c.isEnabled());
      f.trackEvent.instant(a, "after stop");
    }
  }

  /**
   * Integer counters of every varint size, in the packets assembled in registers and in the
   * fixed-shape path's (negative values, and values from 2^56 up), read back in order with their
   * values, tracks and timestamps, each track described before its first value.
   */
  @Test
  void countersOfEverySizeReadBackWithTheirValuesAndTracks() throws Exception {
    long[] values = {0, 1, 127, 128, 16_384, (1L << 35) + 5, (1L << 56) - 1, 1L << 56, Long.MAX_VALUE, -1,
        Long.MIN_VALUE, 42};
    Track first = Track.counter("sizes_a");
    Track second = Track.counter("sizes_b");
    try (TrackEventFixture f = new TrackEventFixture(dir, org.jperfetto.producer.BufferExhaustedPolicy.STALL, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      TrackEvent te = f.trackEvent;
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < values.length; i++) {
          te.begin(APP, "between");
          te.counter(APP, i % 2 == 0 ? first : second, values[i]);
          te.end(APP);
        }
      }
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      List<DecodedEvents.Event> counters = d.ofType(Type.TYPE_COUNTER);
      assertEquals(3 * values.length, counters.size());
      List<DecodedEvents.Event> slices = d.ofType(Type.TYPE_SLICE_BEGIN);
      for (int k = 0; k < counters.size(); k++) {
        DecodedEvents.Event c = counters.get(k);
        int i = k % values.length;
        assertEquals(values[i], c.counter(), "counter " + k);
        assertEquals((i % 2 == 0 ? first : second).uuid(), c.trackUuid(), "counter " + k);
        assertTrue(c.timestamp() >= slices.get(k).timestamp(), "counter " + k + " after its slice's begin");
      }
      assertTrue(d.tracks.containsKey(first.uuid()) && d.tracks.containsKey(second.uuid()), "both tracks described");
      assertEquals(first.name(), d.tracks.get(first.uuid()).getStaticName());
    }
  }

  /**
   * The brief's size budget: slices with one int debug annotation and a counter every 10th take at
   * most 53 bytes each in the trace file (upstream v58 measured about that), counting the fields
   * the service adds to every packet as upstream's traced does (from the v58 capture).
   */
  @Test
  void slicesWithOneIntArgTakeAtMost53BytesEachInTheTrace() throws Exception {
    int n = 20_000;
    double trustedPerPacket = TrackEventInteropTest.upstreamTrustedBytesPerPacket();
    Track counter = Track.counter("size_counter");
    try (TrackEventFixture f = new TrackEventFixture(dir, org.jperfetto.producer.BufferExhaustedPolicy.STALL, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      for (int i = 0; i < n; i++) {
        f.trackEvent.begin(APP, "slice", "i", i);
        if (i % 10 == 0) {
          f.trackEvent.counter(APP, counter, (long) i);
        }
        f.trackEvent.end(APP);
      }
      DecodedEvents d = f.finish();
      assertEquals(n, d.named("slice").size(), "no slice lost");
      List<TrackTestHost.Packet> packets = f.host.packets();
      long bytes = 0;
      long slow = 0;
      for (TrackTestHost.Packet p : packets) {
        bytes += p.size() + 1 + TrackEventInteropTest.varintSize(p.size());
        slow += TrackEventInteropTest.slowTimestampBytes(p.packet());
      }
      double perSlice = (bytes + trustedPerPacket * packets.size()) / n;
      double atFullSpeed = perSlice - (double) slow / n;
      System.out.printf("trace bytes per slice (%d slices, one int arg, counter every 10th): %.2f, %.2f with every"
          + " delta timestamp counted at 2 bytes (%.2f producer-written + %.2f trusted fields per packet)%n", n,
          perSlice, atFullSpeed, (double) bytes / n, trustedPerPacket);
      assertTrue(atFullSpeed <= 53.0, "bytes per slice " + atFullSpeed + " (raw " + perSlice + ")");
    }
  }

  @Test
  void twoSessionsGetTheirOwnSequencesAndCategoryChoices() throws Exception {
    Category only2 = Category.of("only2");
    try (TrackEventFixture f = new TrackEventFixture(dir, APP, only2)) {
      f.start(1, TrackEventConfig.newBuilder().addDisabledCategories("only2").build());
      f.start(2, TrackEventConfig.getDefaultInstance());
      TrackTestHost.await("two instances", () -> f.trackEvent.dataSource().activeInstances() == 2);
      f.trackEvent.instant(APP, "both");
      f.trackEvent.instant(only2, "second");
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      List<DecodedEvents.Event> both = d.named("both");
      assertEquals(2, both.size(), "one copy per session");
      assertTrue(both.get(0).sequence() != both.get(1).sequence(), "each session has its own sequence");
      assertEquals(1, d.named("second").size(), "only the session that enables only2 records it");
      assertEquals(2, d.clearedCount.size(), "each sequence starts its own incremental state");
    }
  }

  /**
   * With one session active a thread's events go straight to its writer (the lane), from the
   * session's second event on; a second session, one of two stopping and a cleared incremental state
   * send events the regular way until the lane fits again, and no event is lost, doubled or sent to
   * a session that stopped.
   */
  @Test
  void withOneSessionEventsTakeTheLaneAndSessionChangesMoveThemOff() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      TrackEvent te = f.trackEvent;
      f.start(1, TrackEventConfig.getDefaultInstance());
      assertFalse(te.onLane(), "no event yet");
      te.begin(APP, "first");
      te.end(APP);
      assertTrue(te.onLane(), "after the session's first event");
      Track values = Track.counter("lane_values");
      for (int i = 0; i < 100; i++) {
        te.begin(APP, "one", "i", i);
        te.counter(APP, values, 3L * i);
        te.end(APP);
      }
      assertTrue(te.onLane());
      Track sliceTrack = Track.named("not_a_counter");
      te.begin(APP, sliceTrack, "described"); // the sequence knows the track now
      te.end(APP, sliceTrack);
      assertThrows(IllegalArgumentException.class, () -> te.counter(APP, sliceTrack, 1),
          "a slice track is refused on the lane too");
      f.start(2, TrackEventConfig.getDefaultInstance());
      TrackTestHost.await("two instances", () -> te.dataSource().activeInstances() == 2);
      te.instant(APP, "both");
      assertFalse(te.onLane(), "two sessions");
      f.finish(); // the stop below is the host's alone: it does not flush the way a service does
      f.host.stopDataSource(1);
      TrackTestHost.await("one instance", () -> te.dataSource().activeInstances() == 1);
      te.begin(APP, "second_only");
      te.end(APP);
      assertTrue(te.onLane(), "the remaining session's lane");
      f.host.clearIncrementalState(2);
      int sequence = -1;
      DecodedEvents d;
      int round = 0;
      do {
        te.begin(APP, "after_clear", "i", round++);
        te.end(APP);
        d = f.finish();
        sequence = d.named("second_only").get(0).sequence();
      } while (d.clearedCount.getOrDefault(sequence, 0) < 2 && round < 1000);
      assertEquals(2, d.clearedCount.getOrDefault(sequence, 0), "the clear reached the lane's sequence");
      assertTrue(te.onLane(), "back on the lane after the clear");
      assertEquals(List.of(), d.errors, "every iid resolves within its incremental state");
      List<DecodedEvents.Event> one = d.named("one");
      assertEquals(100, one.size());
      for (int i = 0; i < one.size(); i++) {
        assertEquals(Map.of("i", (long) i), one.get(i).args());
      }
      List<DecodedEvents.Event> counters = d.ofType(Type.TYPE_COUNTER);
      assertEquals(100, counters.size());
      for (int i = 0; i < counters.size(); i++) {
        assertEquals(3L * i, counters.get(i).counter(), "counter " + i);
      }
      assertEquals(2, d.named("both").size(), "one copy per session");
      assertEquals(1, d.named("second_only").size(), "nothing for the stopped session");
      assertEquals(round, d.named("after_clear").size());
      assertEquals(sequence, d.named("after_clear").get(round - 1).sequence());
    }
  }

  /**
   * The lane writes a slice for its own TrackEvent's categories only: a category registered with
   * another TrackEvent, recording in an instance of the same slot, is refused as on the regular way.
   */
  @Test
  void anotherTrackEventsCategoryIsRefusedOnTheLaneToo() throws Exception {
    Category mine = Category.of("mine");
    Category theirs = Category.of("theirs");
    try (TrackEventFixture a = new TrackEventFixture(java.nio.file.Files.createDirectories(dir.resolve("a")), mine);
        TrackEventFixture b = new TrackEventFixture(java.nio.file.Files.createDirectories(dir.resolve("b")), theirs)) {
      a.start(1, TrackEventConfig.getDefaultInstance());
      b.start(1, TrackEventConfig.getDefaultInstance());
      a.trackEvent.begin(mine, "on_lane");
      a.trackEvent.end(mine);
      assertTrue(a.trackEvent.onLane());
      assertEquals(mine.enabledInstances(), theirs.enabledInstances(), "both record in the same slot");
      assertThrows(IllegalArgumentException.class, () -> a.trackEvent.begin(theirs, "not_mine"));
      assertThrows(IllegalArgumentException.class, () -> a.trackEvent.end(theirs));
      DecodedEvents d = a.finish();
      assertEquals(List.of(), d.errors);
      assertEquals(1, d.named("on_lane").size());
      assertTrue(d.named("not_mine").isEmpty());
      assertEquals(1, d.ofType(Type.TYPE_SLICE_END).size(), "only the slice of its own category ended");
    }
  }

  /**
   * Plain slices (the register path), instants and int-argument slices mixed on one thread, across
   * a cleared incremental state and a second session starting: every event keeps its type, name,
   * order, nesting and session.
   */
  @Test
  void plainSlicesAmongOtherEventsAndSessionsKeepTheirShapeOrderAndSession() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      int n = 300;
      for (int i = 0; i < n; i++) {
        f.trackEvent.begin(APP, "outer");
        f.trackEvent.instant(APP, "mark");
        f.trackEvent.begin(APP, "inner", "i", innerArg(i));
        f.trackEvent.end(APP);
        f.trackEvent.end(APP);
        if (i == n / 3) {
          f.host.clearIncrementalState(1);
        }
      }
      f.start(2, TrackEventConfig.getDefaultInstance());
      TrackTestHost.await("two instances", () -> f.trackEvent.dataSource().activeInstances() == 2);
      f.trackEvent.begin(APP, "shared");
      f.trackEvent.end(APP);
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors, "every iid resolves within its incremental state");
      assertEquals(n, d.named("outer").size());
      assertTrue(d.named("mark").stream().allMatch(e -> e.type() == Type.TYPE_INSTANT), "instants stay instants");
      List<DecodedEvents.Event> shared = d.named("shared");
      assertEquals(2, shared.size(), "one copy per session");
      assertTrue(shared.get(0).sequence() != shared.get(1).sequence());
      int sequence = d.named("outer").get(0).sequence();
      List<DecodedEvents.Event> first = d.events.stream().filter(e -> e.sequence() == sequence).toList();
      long last = Long.MIN_VALUE;
      int depth = 0;
      for (DecodedEvents.Event e : first) {
        assertTrue(e.timestamp() >= last, "timestamps in order: " + e);
        last = e.timestamp();
        depth += e.type() == Type.TYPE_SLICE_BEGIN ? 1 : e.type() == Type.TYPE_SLICE_END ? -1 : 0;
        assertTrue(depth >= 0 && depth <= 2, "nesting stays within two levels: " + e);
      }
      assertEquals(0, depth, "every begin has its end");
      assertEquals(2 * n + 1, first.stream().filter(e -> e.type() == Type.TYPE_SLICE_END).count());
      List<DecodedEvents.Event> inner = d.named("inner");
      assertEquals(n, inner.size());
      for (int i = 0; i < n; i++) {
        assertEquals(Map.of("i", innerArg(i)), inner.get(i).args(), "inner " + i);
      }
    }
  }

  /** Mostly small values (the register path), some negative or huge ones (the encoder's). */
  private static long innerArg(int i) {
    return i % 7 == 0 ? -i : i % 11 == 0 ? Long.MAX_VALUE - i : i;
  }

  @Test
  void eachThreadWritesItsOwnSequenceWithItsOwnThreadTrack() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      Thread worker = Thread.ofPlatform().name("worker-7").start(() -> {
        try (var _ = f.trackEvent.slice(APP, "on worker", "n", 1)) {
          f.trackEvent.instant(APP, "inside");
        }
        f.trackEvent.flush();
      });
      worker.join();
      f.trackEvent.instant(APP, "on main");
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      DecodedEvents.Event w = d.named("on worker").get(0);
      DecodedEvents.Event m = d.named("on main").get(0);
      assertTrue(w.sequence() != m.sequence());
      assertTrue(w.trackUuid() != m.trackUuid());
      assertEquals("worker-7", d.tracks.get(w.trackUuid()).getThread().getThreadName());
      assertEquals(d.tracks.get(w.trackUuid()).getParentUuid(), d.tracks.get(m.trackUuid()).getParentUuid(),
          "both threads under the same process track");
      assertEquals(w.trackUuid(), d.named("inside").get(0).trackUuid());
    }
  }

  /**
   * More threads than TrackEvent's per-thread cache has slots, platform and virtual, run in waves of
   * threads whose ids share slots (ids mod 64), each wave writing at once: every event still lands
   * on its own thread's track, and a platform thread's on its own sequence. (Waves keep the chunks
   * in use below the SMB's 64.)
   */
  @Test
  void manyThreadsSharingCacheSlotsKeepTheirOwnTracks() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      int threads = 150;
      int slotsPerWave = 12;
      List<List<Thread>> waves = new java.util.ArrayList<>();
      java.util.Map<Thread, java.util.concurrent.CyclicBarrier> barriers = new java.util.HashMap<>();
      List<Thread> all = new java.util.ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        Thread.Builder b = t % 3 == 0 ? Thread.ofVirtual() : Thread.ofPlatform();
        Thread[] self = new Thread[1];
        self[0] = b.name("w" + id).unstarted(() -> {
          try {
            barriers.get(self[0]).await(20, TimeUnit.SECONDS);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          for (int k = 0; k < 20; k++) {
            f.trackEvent.instant(APP, "w" + id);
            Thread.yield();
          }
          f.trackEvent.flush();
        });
        all.add(self[0]);
      }
      for (Thread t : all) {
        int wave = (int) (t.threadId() & 63) / slotsPerWave;
        while (waves.size() <= wave) {
          waves.add(new java.util.ArrayList<>());
        }
        waves.get(wave).add(t);
      }
      boolean collided = false;
      for (List<Thread> wave : waves) {
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(Math.max(1, wave.size()));
        java.util.Set<Long> slots = new java.util.HashSet<>();
        for (Thread t : wave) {
          barriers.put(t, barrier);
          collided |= !slots.add(t.threadId() & 63);
        }
        wave.forEach(Thread::start);
        for (Thread t : wave) {
          t.join();
        }
      }
      assertTrue(collided, "some threads of a wave share a cache slot");
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      java.util.Set<Long> tracks = new java.util.HashSet<>();
      for (int t = 0; t < threads; t++) {
        List<DecodedEvents.Event> mine = d.named("w" + t);
        assertEquals(20, mine.size(), "events of w" + t);
        long track = mine.get(0).trackUuid();
        for (DecodedEvents.Event e : mine) {
          assertEquals(track, e.trackUuid(), "w" + t + " stays on one track");
          if (t % 3 != 0) { // a virtual thread's events take whichever shared writer is free
            assertEquals(mine.get(0).sequence(), e.sequence(), "w" + t + " stays on one sequence");
          }
        }
        if (t % 3 == 0) {
          assertEquals("w" + t, d.tracks.get(track).getStaticName(), "a virtual thread's own track");
          assertTrue(tracks.add(track));
        } else {
          assertEquals("w" + t, d.tracks.get(track).getThread().getThreadName());
          tracks.add(track);
        }
      }
      assertEquals(threads, tracks.size(), "one track per thread, platform or virtual");
    }
  }

  @Test
  void theStartIsAckedWithTheCategoriesAlreadyOn() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.host.startDataSource(7, TrackEventConfig.getDefaultInstance());
      TrackTestHost.await("NotifyDataSourceStarted", () -> !f.host.startsAcked().isEmpty());
      // The service counts the source started from this ack on (will_notify_on_start, as the SDK
      // registers): an event emitted after the consumer hears so must be recorded.
      assertTrue(APP.isEnabled(), "on before the ack");
      assertEquals(List.of(7L), f.host.startsAcked());
    }
  }

  @Test
  void slicesGoOnAfterTheSmbFillsAndTheLossIsAnnounced() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      TrackEvent te = f.trackEvent;
      te.begin(APP, "s", "i", -1);
      te.end(APP);
      f.host.pauseReading();
      int whileFull = 60_000; // over 1 MB of slices into the 256 KiB SMB: most are dropped
      int after = 3000; // the writer drops on until its scratch chunk is full, then writes again
      for (int i = 0; i < whileFull + after; i++) {
        if (i == whileFull) {
          f.host.resumeReading();
        }
        te.begin(APP, "s", "i", i);
        te.end(APP);
        if (i == whileFull / 2) {
          // First interned while the writer drops: its interned data is lost with the packet, and
          // it must be interned again in the new incremental state that follows the loss.
          te.instant(APP, "named_while_dropping");
        }
        if (i > whileFull && i % 100 == 0) {
          te.instant(APP, "named_while_dropping");
        }
      }
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      // The writer started a new incremental state after the loss, so trace_processor would skip
      // nothing: without it every packet after the first loss would have been unreadable.
      assertEquals(0, d.skippedAfterLoss, "packets trace_processor would skip after the loss");
      assertTrue(d.clearedCount.values().stream().mapToInt(Integer::intValue).sum() >= 2,
          "a new incremental state after the loss: " + d.clearedCount);
      assertFalse(d.named("named_while_dropping").isEmpty());
      List<Long> values = d.named("s").stream().map(e -> (Long) e.args().get("i")).toList();
      assertEquals(values.stream().sorted().distinct().toList(), values, "in order, no duplicates");
      long keptWhileFull = values.stream().filter(v -> v >= 0 && v < whileFull).count();
      assertTrue(keptWhileFull > 0 && keptWhileFull < whileFull, "kept " + keptWhileFull + " while full");
      long last = whileFull + after - 1;
      long firstAfter = values.stream().filter(v -> v >= whileFull).findFirst().orElseThrow();
      assertEquals(LongStream.rangeClosed(firstAfter, last).boxed().toList(),
          values.subList(values.indexOf(firstAfter), values.size()), "whole from the writer's way back");
      assertTrue(last - firstAfter > after / 2, "back after " + (firstAfter - whileFull) + " slices");
      assertTrue(f.host.packets().stream().anyMatch(p -> p.packet().getPreviousPacketDropped() != 0),
          "a packet says that packets were dropped before it");
    }
  }

  @Test
  void aTracePointInsideAnEventFunctionIsDroppedNotCorrupting() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      f.trackEvent.instant(APP, "outer", ev -> {
        f.trackEvent.instant(APP, "reentrant");
        ev.arg("k", 1L);
      });
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      assertEquals(Map.of("k", 1L), d.named("outer").get(0).args());
      assertTrue(d.named("reentrant").isEmpty());
    }
  }

  @Test
  void aNullEventNameIsRefusedWhileRecordingAndNothingNamelessIsWritten() throws Exception {
    try (TrackEventFixture f = new TrackEventFixture(dir, APP)) {
      f.start(1, TrackEventConfig.getDefaultInstance());
      TrackEvent te = f.trackEvent;
      List<Executable> calls = List.of(
          () -> te.begin(APP, null),
          () -> te.slice(APP, null),
          () -> te.instant(APP, null),
          () -> te.instant(APP, null, "k", 1L),
          () -> te.instant(APP, null, "a", 1L, "b", 2L),
          () -> te.begin(APP, QUEUE, null));
      for (var call : calls) {
        assertThrows(IllegalArgumentException.class, call);
      }
      te.instant(APP, "named");
      DecodedEvents d = f.finish();
      assertEquals(List.of(), d.errors);
      assertEquals(1, d.named("named").size());
      assertTrue(d.events.stream().noneMatch(e -> e.name() == null || e.name().isEmpty()),
          () -> "nameless events: " + d.events);
    }
  }
}
