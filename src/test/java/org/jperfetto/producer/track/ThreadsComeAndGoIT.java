package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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
  static final int THREADS = 2_000;

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
    try {
      for (int i = 0; i < n; i++) {
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
}
