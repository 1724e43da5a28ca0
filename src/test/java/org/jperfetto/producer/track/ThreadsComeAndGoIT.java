package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server's threads as they come and go: short-lived platform threads one after another, each
 * tracing one slice, with the default SMB. A thread's writer must give its chunk and id back when
 * the thread ends, or after as many threads as the SMB has chunks every new thread's events are
 * dropped. The trace is decoded as trace_processor reads it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ThreadsComeAndGoIT {
  /** Threads in the default suite; the stress run ({@code ThreadsComeAndGoStressIT}) does 100k. */
  static final int THREADS = 1_000;

  static TraceConfig config(int bufferKb) {
    return TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(bufferKb))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(TrackEvent.DATA_SOURCE_NAME)))
        .build();
  }

  /** Runs body with a TrackEvent of category "req" recording into an in-process session; the trace decoded. */
  static DecodedEvents record(int bufferKb, Category req, TrackEvent te, Runnable body) throws Exception {
    try (InProcessTracing tracing = InProcessTracing.start(
        TracingProducer.builder("threads-come-and-go").dataSource(te.dataSource()))) {
      InProcessSession s = tracing.newSession(config(bufferKb)).start();
      assertTrue(req.isEnabled());
      body.run();
      s.stop();
      return InProcessTrackEventIT.decode(s.readTrace());
    }
  }

  /** n threads from builder, one after another, each one slice "request" with arg i. */
  static void oneAfterAnother(int n, Thread.Builder builder, TrackEvent te, Category req) {
    oneAfterAnother(0, n, builder, te, req);
  }

  /** As {@link #oneAfterAnother(int, Thread.Builder, TrackEvent, Category)}, args from..from+n-1. */
  static void oneAfterAnother(int from, int n, Thread.Builder builder, TrackEvent te, Category req) {
    try {
      for (int i = from; i < from + n; i++) {
        long index = i;
        Thread t = builder.start(() -> {
          te.begin(req, "request", "i", index);
          te.end(req);
        });
        t.join();
      }
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** Every slice 0..n-1 begun and ended exactly once, nothing unreadable. */
  static void assertAllSlices(DecodedEvents d, int n) {
    assertEquals(List.of(), d.errors);
    assertEquals(0, d.skippedAfterLoss, "no packet lost");
    List<DecodedEvents.Event> begins = d.named("request");
    assertEquals(n, begins.size(), "every thread's slice is in the trace");
    assertEquals(n, begins.stream().map(e -> e.args().get("i")).distinct().count());
    assertEquals(n, d.ofType(Type.TYPE_SLICE_END).size());
  }

  @Test
  void shortLivedPlatformThreadsOneAfterAnotherLoseNothing() throws Exception {
    Category req = Category.of("req");
    TrackEvent te = TrackEvent.builder().categories(req).processName("come_and_go").build();
    DecodedEvents d = record(32 * 1024, req, te,
        () -> oneAfterAnother(THREADS, Thread.ofPlatform().name("req-", 0), te, req));
    assertAllSlices(d, THREADS);
    // One thread track per thread (each thread its own sequence, one after another).
    long threadTracks = d.tracks.values().stream().filter(t -> t.hasThread()).count();
    assertTrue(threadTracks >= THREADS, "thread tracks: " + threadTracks);
  }

  @Test
  void shortLivedVirtualThreadsOneAfterAnotherLoseNothingAndGetATrackEach() throws Exception {
    Category req = Category.of("req");
    TrackEvent te = TrackEvent.builder().categories(req).processName("come_and_go").carrierTids(true).build();
    DecodedEvents d = record(32 * 1024, req, te,
        () -> oneAfterAnother(THREADS, Thread.ofVirtual(), te, req));
    assertAllSlices(d, THREADS);
    Map<Long, List<DecodedEvents.Event>> byTrack = byTrack(d);
    assertEquals(THREADS, byTrack.size(), "one track per virtual thread");
    for (long uuid : byTrack.keySet()) {
      assertTrue(d.tracks.get(uuid).getStaticName().startsWith("VirtualThread#"), d.tracks.get(uuid).toString());
    }
    assertTrue(te.virtualThreadStates() <= VirtualThreadStates.MAX_STATES);
    assertCarriersNamed(d.named("request"));
  }

  /**
   * Each slice begin of a virtual thread names its carrier: a tid of a thread of this process
   * (the carriers outlive the test), a few carriers for many virtual threads.
   */
  static void assertCarriersNamed(List<DecodedEvents.Event> begins) {
    java.util.Set<Long> carriers = new java.util.HashSet<>();
    for (DecodedEvents.Event e : begins) {
      assertTrue(e.args().get(ThreadState.CARRIER_TID_ARG) instanceof Long, e.toString());
      carriers.add((Long) e.args().get(ThreadState.CARRIER_TID_ARG));
    }
    for (long tid : carriers) {
      assertTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task/" + tid)),
          "carrier_tid " + tid + " is no thread of this process");
    }
    assertTrue(carriers.size() <= 4 * Runtime.getRuntime().availableProcessors() + 4,
        "a few carriers for " + begins.size() + " virtual threads: " + carriers.size());
  }

  @Test
  void concurrentVirtualThreadsNestTheirSlicesOnTheirOwnTracksAcrossSleeps() throws Exception {
    int n = THREADS;
    Category req = Category.of("req");
    TrackEvent te = TrackEvent.builder().categories(req).processName("come_and_go").build();
    DecodedEvents d = record(32 * 1024, req, te, () -> concurrentRequests(n, te, req));
    assertEquals(List.of(), d.errors);
    assertEquals(0, d.skippedAfterLoss, "no packet lost");
    assertEquals(n, d.named("request").size());
    assertEquals(n, d.named("parse").size());
    assertEquals(n, d.named("respond").size());
    assertEquals(3 * n, d.ofType(Type.TYPE_SLICE_END).size());
    Map<Long, List<DecodedEvents.Event>> byTrack = byTrack(d);
    assertEquals(n, byTrack.size(), "one track per virtual thread");
    for (List<DecodedEvents.Event> events : byTrack.values()) {
      assertEquals(6, events.size());
      assertEquals(2, maxDepth(events), "request around parse, then respond: " + events);
    }
    for (DecodedEvents.Event e : d.named("parse")) {
      assertEquals(Map.of(), e.args(), "no carrier_tid unless asked for");
    }
  }

  /** n virtual threads at once, each a "request" slice around "parse" and "respond", sleeping in each. */
  static void concurrentRequests(int n, TrackEvent te, Category req) {
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      threads.add(Thread.ofVirtual().start(() -> {
        try {
          te.begin(req, "request");
          te.begin(req, "parse");
          Thread.sleep(2);
          te.end(req);
          te.begin(req, "respond");
          Thread.sleep(2);
          te.end(req);
          te.end(req);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
    }
    try {
      for (Thread t : threads) {
        t.join();
      }
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** The slice events per track, in time order (an end before a begin at the same time). */
  static Map<Long, List<DecodedEvents.Event>> byTrack(DecodedEvents d) {
    Map<Long, List<DecodedEvents.Event>> byTrack = new HashMap<>();
    for (DecodedEvents.Event e : d.events) {
      if ((e.type() == Type.TYPE_SLICE_BEGIN || e.type() == Type.TYPE_SLICE_END)
          && !"__marker__".equals(e.categories().isEmpty() ? null : e.categories().get(0))) {
        byTrack.computeIfAbsent(e.trackUuid(), k -> new ArrayList<>()).add(e);
      }
    }
    Comparator<DecodedEvents.Event> order = Comparator.comparingLong(DecodedEvents.Event::timestamp)
        .thenComparing(e -> e.type() == Type.TYPE_SLICE_BEGIN);
    byTrack.values().forEach(l -> l.sort(order));
    return byTrack;
  }

  /** The deepest nesting of slices in events (one track's, in time order); -1 if an end has no begin. */
  static int maxDepth(List<DecodedEvents.Event> events) {
    int depth = 0;
    int max = 0;
    for (DecodedEvents.Event e : events) {
      depth += e.type() == Type.TYPE_SLICE_BEGIN ? 1 : -1;
      if (depth < 0) {
        return -1;
      }
      max = Math.max(max, depth);
    }
    return depth == 0 ? max : -1;
  }
}
