package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application as the in-process backend is meant for: the usual TrackEvent API, a few lines to
 * get a trace file, no flush calls of its own. The file is decoded as trace_processor would.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InProcessTrackEventIT {
  @TempDir
  Path dir;

  static TraceConfig config(String... disabledCategories) {
    return TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(TrackEvent.DATA_SOURCE_NAME)
            .setTrackEventConfig(TrackEventConfig.newBuilder().addAllDisabledCategories(List.of(disabledCategories)))))
        .build();
  }

  static DecodedEvents decode(byte[] trace) throws Exception {
    DecodedEvents d = new DecodedEvents();
    for (TracePacket p : Trace.parseFrom(trace).getPacketList()) {
      if (p.getTrustedPacketSequenceId() != 1) { // the service's own packets
        d.add(p.getTrustedPacketSequenceId(), p);
      }
    }
    return d;
  }

  @Test
  void slicesAndCountersFromTwoThreadsLandInTheFile() throws Exception {
    Category app = Category.of("app");
    Category noisy = Category.of("noisy");
    Track queue = Track.counter("queue_depth");
    TrackEvent te = TrackEvent.builder().categories(app, noisy).processName("inproc_app").build();
    Path file = dir.resolve("app.perfetto-trace");
    int n = 500;
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("inproc-app").dataSource(te.dataSource()))) {
      try (InProcessSession _ = tracing.newSession(config("noisy")).writeTo(file).start()) {
        assertTrue(app.isEnabled(), "start() returns once the data source runs");
        Thread worker = new Thread(() -> {
          for (int i = 0; i < n; i++) {
            te.begin(app, "worker_task", "i", i);
            te.end(app);
          }
        }, "inproc-worker");
        worker.start();
        for (int i = 0; i < n; i++) {
          te.begin(app, "main_step", "i", i);
          te.counter(app, queue, (long) i);
          te.instant(noisy, "never");
          te.end(app);
        }
        worker.join();
      }
      assertTrue(!app.isEnabled(), "stopped with the session");
    }

    DecodedEvents d = decode(Files.readAllBytes(file));
    assertEquals(List.of(), d.errors);
    List<DecodedEvents.Event> main = d.named("main_step");
    assertEquals(n, main.size(), "every slice of the main thread reached the file");
    assertEquals(n, d.named("worker_task").size(), "every slice of the worker (its chunk was never flushed by it)");
    for (int i = 0; i < n; i++) {
      assertEquals(Map.of("i", (long) i), main.get(i).args());
    }
    assertEquals(2 * n, d.ofType(Type.TYPE_SLICE_END).size());
    List<DecodedEvents.Event> counters = d.ofType(Type.TYPE_COUNTER);
    assertEquals(n, counters.size());
    assertEquals(n - 1, counters.get(n - 1).counter());
    assertEquals("queue_depth", d.tracks.get(queue.uuid()).getStaticName());
    assertTrue(d.named("never").isEmpty(), "disabled category");
  }

  /**
   * An app that waits for its category to turn on traces at once (the reference producer does):
   * an event traced the moment the category is enabled reaches the session. The categories used
   * to be enabled before the instance was active, and a burst started in between was lost whole
   * (seen under load in MultiMachineNetnsIT: 0 of 4,200 events of one producer).
   */
  @Test
  void anEventTracedTheMomentItsCategoryTurnsOnIsRecorded() throws Exception {
    Category app = Category.of("app");
    Category counters = Category.of("app.counters");
    boolean[] seenEnabled = {false};
    boolean[] othersSetToo = {false};
    TrackEvent[] holder = new TrackEvent[1];
    TrackEvent te = TrackEvent.builder().categories(app, counters).processName("eager_app")
        .onSessionsChanged(() -> {
          if (app.isEnabled() && !seenEnabled[0]) {
            seenEnabled[0] = true;
            othersSetToo[0] = counters.isEnabled(); // the listener comes once every category is set
            holder[0].instant(app, "first_moment"); // on the producer thread, as the category turns on
          }
        }).build();
    holder[0] = te;
    Path file = dir.resolve("eager.perfetto-trace");
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("eager-app").dataSource(te.dataSource()))) {
      try (InProcessSession _ = tracing.newSession(config()).writeTo(file).start()) {
        assertTrue(seenEnabled[0], "the listener saw the category on");
        assertTrue(othersSetToo[0], "and the session's other category too (what ref-producer waits for)");
        te.instant(app, "later");
      }
    }
    DecodedEvents d = decode(Files.readAllBytes(file));
    assertEquals(List.of(), d.errors);
    assertEquals(1, d.named("later").size());
    assertEquals(1, d.named("first_moment").size(), "the event traced as the category turned on");
  }

  @Test
  void inMemorySessionHasTheSameEventsAsAFileSession() throws Exception {
    Category app = Category.of("app");
    TrackEvent te = TrackEvent.builder().categories(app).build();
    Path file = dir.resolve("both.perfetto-trace");
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("inproc-both").dataSource(te.dataSource()))) {
      InProcessSession memory = tracing.newSession(config()).start();
      InProcessSession onDisk = tracing.newSession(config()).writeTo(file).start();
      for (int i = 0; i < 100; i++) {
        te.begin(app, "both", "i", i);
        te.end(app);
      }
      onDisk.stop();
      te.instant(app, "only_in_memory");
      memory.stop();
      DecodedEvents fromMemory = decode(memory.readTrace());
      DecodedEvents fromFile = decode(Files.readAllBytes(file));
      assertEquals(List.of(), fromMemory.errors);
      assertEquals(List.of(), fromFile.errors);
      assertEquals(100, fromMemory.named("both").size());
      assertEquals(100, fromFile.named("both").size());
      assertEquals(1, fromMemory.named("only_in_memory").size());
      assertTrue(fromFile.named("only_in_memory").isEmpty());
      assertArrayEquals(memory.readTrace(), memory.readTrace(), "readTrace can be called again");
    }
  }
}
