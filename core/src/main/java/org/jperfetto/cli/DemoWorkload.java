package org.jperfetto.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.Track;
import org.jperfetto.producer.track.TrackEvent;

/**
 * The program {@code jperfetto demo} traces: a small request pipeline on four named threads,
 * instrumented with the TrackEvent API so that every kind of event shows up in the trace.
 *
 * <pre>
 *  demo-client ──queue──▶ demo-worker-1 ─┐
 *              └─queue──▶ demo-worker-2 ─┴─queue──▶ demo-writer
 * </pre>
 *
 * <ul>
 *   <li>slices, nested: client "make_request"; worker "handle_request" &gt; "parse" / "compute";
 *       writer "store" &gt; "encode" / "write", each with debug annotations (request id, sizes,
 *       the request's path as a string, a checksum, a score as a double);</li>
 *   <li>flows: one per request, from the client's slice through the worker's to the writer's,
 *       where it terminates (flow id = {@link #flowId});</li>
 *   <li>instants: "burst" on the client every {@link #BURST_EVERY} requests, "cache_miss" on a
 *       worker;</li>
 *   <li>counters: {@value #QUEUE_DEPTH} (requests waiting, integer) and {@value #RATE} (requests
 *       stored per second, a double);</li>
 *   <li>a custom track {@value #BATCHES} holding the writer's "batch" slices, one per
 *       {@link #BATCH_SIZE} requests;</li>
 *   <li>garbage: every request carries a fresh payload array and the writer keeps a ring of recent
 *       ones, so the young and old generations both see collections (for the JVM's own events);
 *       once every {@link #COMPACT_PERIOD} the writer drops the ring and asks for a collection
 *       ("compact"), so even a one-second demo shows a GC next to the slices it paused.</li>
 * </ul>
 *
 * <p>Sizes and paths come from seeded generators: two runs make the same request sequence. Each
 * instance has its own categories and {@link TrackEvent} (a category belongs to one TrackEvent).
 */
final class DemoWorkload implements AutoCloseable {
  static final String PROCESS_NAME = "jperfetto demo";
  static final String CLIENT_THREAD = "demo-client";
  static final String WRITER_THREAD = "demo-writer";
  static final String WORKER_THREAD_PREFIX = "demo-worker-";
  static final int WORKERS = 2;
  static final String QUEUE_DEPTH = "queue_depth";
  static final String RATE = "requests_per_s";
  static final String BATCHES = "storage batches";
  static final int BURST_EVERY = 50;
  static final int BURST_SIZE = 10;
  static final int BATCH_SIZE = 16;
  /** Time between two requests of the client. */
  static final Duration REQUEST_PERIOD = Duration.ofMillis(2);
  /** Recent payloads the writer keeps alive (they age into the old generation). */
  static final int RETAINED_PAYLOADS = 256;
  /** How often the writer drops its retained payloads and asks for a collection (first after half). */
  static final Duration COMPACT_PERIOD = Duration.ofSeconds(1);
  static final String COMPACT = "compact";
  static final String[] PATHS = {"/api/users", "/api/orders", "/api/search", "/static/logo.png"};

  private static final System.Logger LOG = System.getLogger(DemoWorkload.class.getName());
  private static final long RATE_PERIOD_NS = TimeUnit.MILLISECONDS.toNanos(250);

  final Category requests = Category.described("request", "the request pipeline: client and workers");
  final Category storage = Category.described("storage", "the writer: encoding and storing results");
  final Category stats = Category.described("stats", "queue depth and throughput counters");
  private final TrackEvent trackEvent = TrackEvent.builder().categories(requests, storage, stats)
      .processName(PROCESS_NAME).bufferExhaustedPolicy(BufferExhaustedPolicy.DROP).build();
  private final Track queueDepth = Track.counter(QUEUE_DEPTH, Track.Unit.COUNT);
  private final Track rate = Track.counter(RATE);
  private final Track batches = Track.named(BATCHES);
  private final long flowBase = ProcessHandle.current().pid() << 32;

  private final BlockingQueue<Request> toWorkers = new ArrayBlockingQueue<>(1024);
  private final BlockingQueue<Request> toWriter = new ArrayBlockingQueue<>(1024);
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean running;

  /** One request as it travels down the pipeline. */
  record Request(long id, String path, byte[] payload) {}

  /** The "track_event" data source to register with the producer. */
  DataSource<?> dataSource() {
    return trackEvent.dataSource();
  }

  /** Flow id of request id (the process id in the high half keeps ids apart between processes). */
  long flowId(long requestId) {
    return flowBase | requestId;
  }

  /** Starts the threads; they run until {@link #close}. */
  synchronized void start() {
    if (running) {
      throw new IllegalStateException("demo workload already running");
    }
    running = true;
    threads.add(thread(CLIENT_THREAD, this::client));
    for (int i = 1; i <= WORKERS; i++) {
      int seed = i;
      threads.add(thread(WORKER_THREAD_PREFIX + i, () -> worker(seed)));
    }
    threads.add(thread(WRITER_THREAD, this::writer));
    threads.forEach(Thread::start);
  }

  /** Stops the threads (each hands its last events to the service first) and waits for them. */
  @Override
  public synchronized void close() {
    running = false;
    for (Thread t : threads) {
      t.interrupt();
    }
    for (Thread t : threads) {
      try {
        t.join(5_000);
        if (t.isAlive()) {
          LOG.log(System.Logger.Level.WARNING, "demo thread did not stop within 5 s: " + t.getName());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    threads.clear();
  }

  private Thread thread(String name, Runnable body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } finally {
        trackEvent.flush(); // the thread's partly filled chunk goes to the service now
      }
    }, name);
    t.setDaemon(true);
    return t;
  }

  // ---- the three roles ----

  private void client() {
    SplittableRandom random = new SplittableRandom(42);
    long next = System.nanoTime();
    int burstLeft = 0;
    for (long id = 1; running; id++) {
      String path = PATHS[random.nextInt(PATHS.length)];
      int size = 1024 << random.nextInt(7); // 1 KiB .. 64 KiB
      long requestId = id;
      trackEvent.begin(requests, "make_request", ev -> ev.arg("request_id", requestId)
          .arg("path", path).arg("payload_bytes", size).flow(flowId(requestId)));
      byte[] payload = new byte[size];
      random.nextBytes(payload);
      boolean queued = offer(toWorkers, new Request(id, path, payload));
      trackEvent.end(requests, ev -> ev.arg("queued", queued));
      trackEvent.counter(stats, queueDepth, (long) toWorkers.size());
      if (id % BURST_EVERY == 0) {
        trackEvent.instant(requests, "burst", "request_id", id, "burst_size", BURST_SIZE);
        burstLeft = BURST_SIZE;
      }
      if (burstLeft > 0) { // a burst: the next requests go out without the pause
        burstLeft--;
        next = System.nanoTime();
      } else {
        next += REQUEST_PERIOD.toNanos();
        pauseUntil(next);
      }
    }
  }

  private void worker(int seed) {
    SplittableRandom random = new SplittableRandom(1000 + seed);
    while (running) {
      Request r = take(toWorkers);
      if (r == null) {
        continue;
      }
      trackEvent.counter(stats, queueDepth, (long) toWorkers.size());
      trackEvent.begin(requests, "handle_request", ev -> ev.arg("request_id", r.id()).arg("path", r.path())
          .flow(flowId(r.id())));
      try (var _ = trackEvent.slice(requests, "parse", "bytes", r.payload().length)) {
        checksum(r.payload(), 1);
      }
      int rounds = 1 + random.nextInt(4);
      double score;
      try (var _ = trackEvent.slice(requests, "compute", "rounds", rounds)) {
        score = compute(r.payload(), rounds);
        if (random.nextInt(10) == 0) {
          trackEvent.instant(requests, "cache_miss", "request_id", r.id());
        }
      }
      trackEvent.end(requests, ev -> ev.arg("score", score).arg("worker", Thread.currentThread().getName()));
      offer(toWriter, r);
    }
  }

  private void writer() {
    Request[] retained = new Request[RETAINED_PAYLOADS];
    long stored = 0;
    long rateStart = System.nanoTime();
    long rateStored = 0;
    long lastCompact = rateStart - COMPACT_PERIOD.toNanos() / 2;
    while (running) {
      if (System.nanoTime() - lastCompact >= COMPACT_PERIOD.toNanos()) {
        try (var _ = trackEvent.slice(storage, COMPACT, "retained", (long) RETAINED_PAYLOADS)) {
          Arrays.fill(retained, null);
          System.gc(); // a GC the JVM's events (jvm.jfr) show on the GC track, under this slice
        }
        lastCompact = System.nanoTime();
      }
      Request r = take(toWriter);
      if (r == null) {
        continue;
      }
      if (stored % BATCH_SIZE == 0) {
        long batch = stored / BATCH_SIZE;
        trackEvent.begin(storage, batches, "batch", ev -> ev.arg("batch", batch).arg("requests", BATCH_SIZE));
      }
      trackEvent.begin(storage, "store", ev -> ev.arg("request_id", r.id()).terminatingFlow(flowId(r.id())));
      byte[] encoded;
      try (var _ = trackEvent.slice(storage, "encode", "bytes", r.payload().length)) {
        encoded = encode(r.payload());
      }
      try (var _ = trackEvent.slice(storage, "write", "bytes", encoded.length)) {
        retained[(int) (stored % RETAINED_PAYLOADS)] = new Request(r.id(), r.path(), encoded);
      }
      trackEvent.end(storage, ev -> ev.arg("checksum", checksum(encoded, 7)));
      stored++;
      if (stored % BATCH_SIZE == 0) {
        trackEvent.end(storage, batches);
      }
      long now = System.nanoTime();
      if (now - rateStart >= RATE_PERIOD_NS) {
        trackEvent.counter(stats, rate, (stored - rateStored) * 1e9 / (now - rateStart));
        rateStart = now;
        rateStored = stored;
      }
    }
  }

  // ---- the "work": CPU-bound and allocation-heavy on purpose ----

  static long checksum(byte[] data, int salt) {
    long h = salt;
    for (byte b : data) {
      h = h * 31 + b;
    }
    return h;
  }

  /**
   * The workers' hot method: a pass over every byte of the payload per round, over a hundred
   * microseconds a request, so that each worker spends about 5 % of a core here. JFR's
   * sampler then finds the workers running this method a few times a second, as a profiler finds a
   * real service's hot code (a demo of one or two seconds still shows it in the flame graph).
   */
  static double compute(byte[] data, int rounds) {
    double acc = 0;
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < data.length; i++) {
        acc += Math.sqrt((data[i] & 0xFF) + r);
      }
    }
    return acc;
  }

  /** A fresh, smaller array: the garbage the demo wants. */
  static byte[] encode(byte[] data) {
    byte[] out = new byte[data.length / 2 + 1];
    for (int i = 0; i < data.length; i += 2) {
      out[i / 2] = (byte) (data[i] ^ data[Math.min(i + 1, data.length - 1)]);
    }
    return out;
  }

  private static boolean offer(BlockingQueue<Request> queue, Request r) {
    return queue.offer(r); // a full queue drops the request (the end annotation says queued=false)
  }

  private Request take(BlockingQueue<Request> queue) {
    try {
      return queue.poll(50, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      return null; // close() interrupts; the loop condition decides
    }
  }

  private void pauseUntil(long deadlineNanos) {
    long wait = deadlineNanos - System.nanoTime();
    if (wait > 0 && running) {
      LockSupport.parkNanos(wait);
    }
  }
}
