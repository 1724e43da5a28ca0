package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code jperfetto demo} end to end: in-process, sockets in a temp dir, the trace decoded back. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoIT {
  private static final Set<String> THREADS = Set.of(DemoWorkload.CLIENT_THREAD, DemoWorkload.WORKER_THREAD_PREFIX + 1,
      DemoWorkload.WORKER_THREAD_PREFIX + 2, DemoWorkload.WRITER_THREAD);

  @TempDir Path dir;
  final ByteArrayOutputStream out = new ByteArrayOutputStream();
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  CliContext context() {
    return new CliContext(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true),
        new PrintStream(err, true), Map.of("PERFETTO_CONSUMER_SOCK_NAME", dir.resolve("c.sock").toString(),
            "PERFETTO_PRODUCER_SOCK_NAME", dir.resolve("p.sock").toString()), false);
  }

  String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void recordsTheWorkloadIntoAFileWithoutAServiceRunning() throws Exception {
    Path file = dir.resolve("demo.perfetto-trace");
    Demo demo = new Demo();
    Plugins.register(Subcommand.class, demo);
    long before = System.nanoTime();
    try {
      assertEquals(0, Jperfetto.run(new String[] {"demo", "-t", "2s", "-o", file.toString()}, context()), err());
    } finally {
      Plugins.unregister(Subcommand.class, demo);
    }
    long after = System.nanoTime();
    assertFalse(err().contains("WARNING"), err());
    assertTrue(err().contains("started an in-process jtraced"), err());
    assertTrue(err().contains("Demo trace: " + file.toAbsolutePath()), err());
    assertTrue(err().contains("ui.perfetto.dev"), err());
    assertFalse(Files.exists(dir.resolve("c.sock")), "the embedded service removed its socket");

    Trace trace = Trace.parseFrom(Files.readAllBytes(file));
    // The stop did not wait out a timeout: every flush (the final one included) was answered by
    // every data source, as the service's stats in the trace say.
    org.jperfetto.protos.TraceStats stats = trace.getPacketList().stream().filter(TracePacket::hasTraceStats)
        .reduce((a, b) -> b).orElseThrow().getTraceStats();
    assertEquals(0, stats.getFlushesFailed(), stats.toString());
    assertEquals(org.jperfetto.protos.TraceStats.FinalFlushOutcome.FINAL_FLUSH_SUCCEEDED, stats.getFinalFlushOutcome(),
        stats.toString());
    DemoTrace t = DemoTrace.of(trace.getPacketList());
    assertEquals(List.of(), t.problems);
    // TrackEvent, jvm.jfr's lanes and its stack samples describe each thread and the process alike.
    assertEquals(List.of(), org.jperfetto.testing.TraceHealth.trackSplits(trace.getPacketList()));
    assertTrue(t.servicePackets.stream().anyMatch(TracePacket::hasTraceConfig), "the service's trace_config");
    assertTrue(t.servicePackets.stream().anyMatch(TracePacket::hasClockSnapshot), "the service's clock snapshot");
    assertTrue(t.threadNames().containsAll(THREADS), t.threadNames().toString());
    assertWorkloadShape(t);
    assertJvmEvents(t, before, after);
    assertWorkersHotMethodsSampled(new org.jperfetto.producer.jfr.DecodedSamples(trace.getPacketList()));
    // trace_provenance lists every sequence that wrote events into the buffer, as upstream's does.
    java.util.Set<Integer> listed = trace.getPacketList().stream().filter(TracePacket::hasTraceProvenance)
        .flatMap(p -> p.getTraceProvenance().getBuffersList().stream())
        .flatMap(b -> b.getSequencesList().stream()).map(sq -> sq.getId()).collect(java.util.stream.Collectors.toSet());
    java.util.Set<Integer> writers = trace.getPacketList().stream().filter(TracePacket::hasTrackEvent)
        .map(TracePacket::getTrustedPacketSequenceId).collect(java.util.stream.Collectors.toSet());
    assertFalse(writers.isEmpty());
    assertTrue(listed.containsAll(writers), "provenance " + listed + " lists the writers " + writers);

    // The terminal view of the same file names what the UI would show.
    out.reset();
    assertEquals(0, new TraceView().run(new String[] {file.toString()}, context()), err());
    String view = out.toString(StandardCharsets.UTF_8);
    for (String expected : List.of("make_request", DemoWorkload.WORKER_THREAD_PREFIX + 1, "GC: ",
        "Stack samples: ", "Losses")) {
      assertTrue(view.contains(expected), expected + " in: " + view);
    }

    // Everything the demo shows beyond plain slices.
    Set<String> everyPath = Set.of(DemoWorkload.PATHS);
    DemoTrace.Event request = t.named("make_request").get(0);
    assertEquals(DemoWorkload.CLIENT_THREAD, request.track());
    assertTrue(request.args().get("request_id") instanceof Long, request.args().toString());
    assertTrue(everyPath.contains((String) request.args().get("path")), request.args().toString());
    assertTrue((Long) request.args().get("payload_bytes") >= 1024, request.args().toString());
    assertTrue(t.named("compute").stream().allMatch(e -> e.args().get("rounds") instanceof Long));
    assertTrue(t.ofType(Type.TYPE_SLICE_END).stream().anyMatch(e -> e.args().get("score") instanceof Double),
        "a slice end with a double annotation");
    assertFalse(t.named("burst").isEmpty(), "burst instants");
    assertTrue(t.named("burst").stream().allMatch(e -> e.type() == Type.TYPE_INSTANT));
    assertTrue(t.hasCounterTrack(DemoWorkload.QUEUE_DEPTH));
    assertTrue(t.hasCounterTrack(DemoWorkload.RATE));
    List<DemoTrace.Event> depth = t.onTrack(DemoWorkload.QUEUE_DEPTH);
    assertFalse(depth.isEmpty());
    assertTrue(depth.stream().allMatch(e -> e.type() == Type.TYPE_COUNTER && e.raw().hasCounterValue()
        && e.raw().getCounterValue() >= 0));
    List<DemoTrace.Event> rate = t.onTrack(DemoWorkload.RATE);
    assertFalse(rate.isEmpty(), "a rate every 250 ms");
    assertTrue(rate.stream().allMatch(e -> e.raw().hasDoubleCounterValue() && e.raw().getDoubleCounterValue() > 0));
    List<DemoTrace.Event> batches = t.onTrack(DemoWorkload.BATCHES);
    assertTrue(batches.stream().anyMatch(e -> "batch".equals(e.name()) && e.type() == Type.TYPE_SLICE_BEGIN),
        "batch slices on the custom track");
  }

  @Test
  void producerModeFeedsASessionOfAnotherConsumer() throws Exception {
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("other-c.sock").toString();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
        TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      // The session first: the service starts track_event when the demo's producer registers it.
      TraceConfig config = Demo.config(60_000).toBuilder().clearDurationMs().build();
      TracingSession session = consumer.enableTracing(config);
      CompletableFuture<Integer> demo = CompletableFuture.supplyAsync(() -> {
        try {
          return new Demo().run(new String[] {"--producer", "-t", "2s"}, context());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertEquals(0, demo.get(30, TimeUnit.SECONDS), err());
      assertTrue(err().contains("running as producer jperfetto-demo on " + producerSocket), err());
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled end = session.disabled().get(20, TimeUnit.SECONDS);
      assertTrue(end.ok(), end.error());
      List<TracePacket> packets = Collections.synchronizedList(new ArrayList<>());
      consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
          .get(30, TimeUnit.SECONDS);
      DemoTrace t = DemoTrace.of(packets);
      assertEquals(List.of(), t.problems);
      assertTrue(t.threadNames().containsAll(THREADS), t.threadNames().toString());
      assertWorkloadShape(t);
    }
  }

  @Test
  void producerModeWithoutAServiceSaysSoInBoundedTime() throws Exception {
    long start = System.nanoTime();
    assertEquals(1, new Demo().run(new String[] {"--producer", "-t", "1s"}, context()));
    assertTrue(err().contains("No tracing service listens on the producer socket " + dir.resolve("p.sock")), err());
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(15), "bounded wait");
  }

  /**
   * The command that trains the image's jperfetto cache (scripts/train-image.sh): on sockets nothing
   * answers on, so into an in-process jtraced, and into /dev/null, the whole session still read out.
   */
  @Test
  void inProcessIntoDevNullAsTheImagesTrainingRunsIt() throws Exception {
    assertEquals(0, new Demo().run(new String[] {"-t", "1s", "-o", "/dev/null"}, context()), err());
    assertTrue(err().contains("started an in-process jtraced"), err());
    java.util.regex.Matcher wrote = java.util.regex.Pattern.compile("Wrote ([0-9]+) bytes into /dev/null")
        .matcher(err());
    assertTrue(wrote.find(), err());
    assertTrue(Long.parseLong(wrote.group(1)) > 10_000, () -> "the demo's events were read out: " + err());
  }

  @Test
  void systemWithoutAServiceIsAnError() throws Exception {
    assertEquals(1, new Demo().run(new String[] {"--system", "-t", "1s", "-o", dir.resolve("x").toString()},
        context()));
    assertTrue(err().contains("Could not connect to the tracing service socket " + dir.resolve("c.sock")), err());
    assertFalse(Files.exists(dir.resolve("x")));
  }

  /**
   * The JVM's own events (jvm.jfr) next to the workload's: GC slices on the GC lane of a thread of
   * this process, one of them the writer's "compact" collection, heap counters, all on
   * CLOCK_MONOTONIC within the run (this JVM's System.nanoTime).
   */
  private static void assertJvmEvents(DemoTrace t, long from, long to) {
    int pid = (int) ProcessHandle.current().pid();
    List<DemoTrace.Event> gc = t.inCategory("jvm.gc").stream().filter(e -> e.type() == Type.TYPE_SLICE_BEGIN).toList();
    assertFalse(gc.isEmpty(), "GC slices in the demo trace");
    for (DemoTrace.Event e : gc) {
      assertTrue(e.lane().startsWith("GC"), "GC slice on a GC lane: " + e);
      assertEquals(pid, t.pidOf(e.raw().getTrackUuid()), "GC lane of a thread of this process: " + e);
      assertEquals(org.jperfetto.protos.BuiltinClock.BUILTIN_CLOCK_MONOTONIC_VALUE, e.packet().getTimestampClockId());
      assertTrue(e.packet().getTimestamp() > from && e.packet().getTimestamp() < to,
          "GC at " + e.packet().getTimestamp() + " within the run [" + from + ", " + to + "]");
    }
    assertTrue(gc.stream().anyMatch(e -> "System.gc()".equals(e.args().get("cause"))),
        "the writer's " + DemoWorkload.COMPACT + " collection: " + gc.stream().map(DemoTrace.Event::args).toList());
    assertFalse(t.named(DemoWorkload.COMPACT).isEmpty(), "compact slices on the writer");
    assertTrue(t.hasCounterTrack("JVM heap used"));
    List<DemoTrace.Event> heap = t.onTrack("JVM heap used");
    assertFalse(heap.isEmpty(), "heap counter values");
    assertTrue(heap.stream().allMatch(e -> e.type() == Type.TYPE_COUNTER && e.raw().getCounterValue() > 0));
  }

  /**
   * jvm.jfr's Java stack samples show where the pipeline's threads spend their CPU: samples on the
   * client, worker or writer threads running the workload's code. (JFR samples a thread only while
   * it runs Java code; the workers' compute keeps each of them there about 5 % of the time,
   * enough for several samples a second even on a loaded machine.)
   */
  private static void assertWorkersHotMethodsSampled(org.jperfetto.producer.jfr.DecodedSamples s) {
    String workload = DemoWorkload.class.getName() + ".";
    var pipeline = s.samples.stream().filter(x -> THREADS.stream().anyMatch(
        name -> s.threadNames.getOrDefault(x.tid(), "").startsWith(name))).toList();
    assertTrue(pipeline.stream().anyMatch(x -> x.frames().stream().anyMatch(f -> f.function().startsWith(workload))),
        "a sample of the pipeline's threads in the workload's code, of " + s.samples.size() + " samples: "
        + pipeline.stream().map(x -> x.leaf()).distinct().toList());
  }

  /**
   * The pipeline as a trace shows it: every stage's slices on its thread, begins matched by ends,
   * and requests followed by flows from the client through a worker to the writer.
   */
  private static void assertWorkloadShape(DemoTrace t) {
    Map<String, String> stageThread = Map.of("make_request", DemoWorkload.CLIENT_THREAD,
        "handle_request", DemoWorkload.WORKER_THREAD_PREFIX, "parse", DemoWorkload.WORKER_THREAD_PREFIX,
        "compute", DemoWorkload.WORKER_THREAD_PREFIX, "store", DemoWorkload.WRITER_THREAD,
        "encode", DemoWorkload.WRITER_THREAD, "write", DemoWorkload.WRITER_THREAD);
    stageThread.forEach((name, thread) -> {
      List<DemoTrace.Event> slices = t.named(name);
      assertTrue(slices.size() >= 10, name + " slices: " + slices.size());
      assertTrue(slices.stream().allMatch(e -> e.type() == Type.TYPE_SLICE_BEGIN && e.track().startsWith(thread)),
          name + " begins on " + thread);
    });
    int begins = t.ofType(Type.TYPE_SLICE_BEGIN).size();
    int ends = t.ofType(Type.TYPE_SLICE_END).size();
    // Slices still open when the session stops, or begun before the data source started, go unmatched.
    assertTrue(Math.abs(begins - ends) <= 20, "begins " + begins + " ends " + ends);

    // flow id -> the threads its events are on; a complete request crosses three threads.
    Map<Long, Set<String>> flowThreads = new HashMap<>();
    Set<Long> terminated = new HashSet<>();
    for (DemoTrace.Event e : t.events) {
      e.raw().getFlowIdsList().forEach(id -> flowThreads.computeIfAbsent(id, k -> new HashSet<>()).add(e.track()));
      for (long id : e.raw().getTerminatingFlowIdsList()) {
        flowThreads.computeIfAbsent(id, k -> new HashSet<>()).add(e.track());
        terminated.add(id);
        assertEquals("store", e.name());
        assertEquals(DemoWorkload.WRITER_THREAD, e.track());
      }
    }
    long complete = terminated.stream().filter(id -> flowThreads.get(id).size() == 3
        && flowThreads.get(id).contains(DemoWorkload.CLIENT_THREAD)).count();
    assertTrue(complete >= 10, "requests followed client -> worker -> writer: " + complete);
  }
}
