package org.jperfetto.example;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;

/**
 * The README's snippets as a standalone app: records {@value #REQUESTS} requests (a slice, an
 * instant and a counter value each) into app.perfetto-trace in the working directory with the
 * in-process backend. {@code --system} instead connects to a running jtraced or traced and records
 * whenever a session there enables its categories.
 */
public final class HelloTrace {
  /** Requests the app handles: the trace holds this many slices, instants and counter values. */
  static final int REQUESTS = 1000;

  // snippet:trackevent-declare
  static final Category APP = Category.of("app");
  static final TrackEvent TE = TrackEvent.builder().categories(APP).build();
  // end-snippet
  static final Track QUEUE_DEPTH = Track.counter("queue");

  private static final Deque<Integer> queue = new ArrayDeque<>();

  private HelloTrace() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("--system")) {
      recordIntoTheSystemService();
      return;
    }
    // snippet:in-process
    try (InProcessTracing tracing = InProcessTracing.start(
            TracingProducer.builder("my.app").dataSource(TE.dataSource()))) {
      try (InProcessSession s = tracing.newSession().writeTo(Path.of("app.perfetto-trace")).start()) {
        runTheWork();                     // TE.slice(...), TE.counter(...) as above
      }                                   // stopped: flushed, and the file complete
    }
    // end-snippet
    System.out.println("wrote app.perfetto-trace: " + REQUESTS + " requests");
  }

  /** The system backend: the producer waits for a service and records while a session asks. */
  static void recordIntoTheSystemService() throws InterruptedException {
    // snippet:system-producer
    TracingProducer producer = TracingProducer.builder("my.app").dataSource(TE.dataSource()).start();
    // end-snippet
    try (producer) {
      while (true) {
        runTheWork();
        Thread.sleep(100);
      }
    }
  }

  static void runTheWork() {
    for (int requestId = 0; requestId < REQUESTS; requestId++) {
      queue.add(requestId);
      handle(requestId);
    }
    queue.clear();
  }

  static void handle(int requestId) {
    // snippet:trackevent-use
    try (var s = TE.slice(APP, "handle_request", "id", requestId)) {   // a slice with a debug arg
      TE.instant(APP, "cache_miss");
      TE.counter(APP, QUEUE_DEPTH, queue.size());                      // QUEUE_DEPTH = Track.counter("queue")
    }
    // end-snippet
  }
}
