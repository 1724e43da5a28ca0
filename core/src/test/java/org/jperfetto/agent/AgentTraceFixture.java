package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.testing.Recordings;
import org.jperfetto.cli.DemoTrace;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.protos.TrackEvent;

/** A jtraced session over an agent-loaded app: wait for its producer, record one RUN, decode. */
final class AgentTraceFixture {
  /** Lets a just-started jvm.jfr recording get going before the workload (JFR starts asynchronously). */
  static final long JFR_WARM_UP_MS = 2000;

  private AgentTraceFixture() {}

  /** Method slices read back: completed count per name, and the track names each ran on. */
  record MethodSlices(Map<String, Integer> counts, Map<String, Set<String>> tracks, int unmatchedEnds,
      int leftOpen) {}

  static void awaitProducer(TracingConsumer consumer, String producerName, Set<String> dataSources)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      TracingServiceState s = consumer.queryServiceState(false).get(10, TimeUnit.SECONDS);
      Set<Integer> ids = new HashSet<>();
      s.getProducersList().stream().filter(p -> p.getName().equals(producerName)).forEach(p -> ids.add(p.getId()));
      Set<String> sources = new HashSet<>();
      s.getDataSourcesList().stream().filter(d -> ids.contains(d.getProducerId()))
          .forEach(d -> sources.add(d.getDsDescriptor().getName()));
      if (sources.containsAll(dataSources)) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, "producer " + producerName + " registered its data sources: " + s);
      Thread.sleep(50);
    }
  }

  /** A session with track_event and jvm.jfr (legacy_config empty: the agent's jfr option decides). */
  static List<TracePacket> record(String consumerSocket, String producerName, AgentTestApp app) throws Exception {
    return record(consumerSocket, producerName, app, List.of(DataSourceConfig.newBuilder().setName("track_event")
        .build(), DataSourceConfig.newBuilder().setName("jvm.jfr").build()), JFR_WARM_UP_MS);
  }

  /**
   * Once the producer registered them, a session with sources (in this order); when all started and
   * warmUpMs later, one RUN of the app; then flush, stop and read back.
   */
  static List<TracePacket> record(String consumerSocket, String producerName, AgentTestApp app,
      List<DataSourceConfig> sources, long warmUpMs) throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      Set<String> names = new HashSet<>();
      sources.forEach(s -> names.add(s.getName()));
      awaitProducer(consumer, producerName, names);
      CompletableFuture<Void> started = new CompletableFuture<>();
      consumer.observeEvents(List.of(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), e -> {
        if (e.getAllDataSourcesStarted()) {
          started.complete(null);
        }
      });
      TraceConfig.Builder config = TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(16 * 1024));
      sources.forEach(s -> config.addDataSources(TraceConfig.DataSource.newBuilder().setConfig(s)));
      TracingSession session = consumer.enableTracing(config.build());
      started.get(30, TimeUnit.SECONDS);
      Thread.sleep(warmUpMs);
      app.run();
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(30, TimeUnit.SECONDS);
      return Recordings.stopAndRead(consumer, session, Duration.ofSeconds(30));
    }
  }

  /** Joins begins and ends per sequence and track. */
  static MethodSlices methodSlices(DemoTrace trace) {
    assertEquals(List.of(), trace.problems, "the trace decodes");
    Map<String, Deque<String>> open = new HashMap<>();
    // Ends read before their begin, per track named by uuid: its events come from several
    // sequences, whose packets the trace holds in no common order (trace_processor sorts them).
    Map<String, Integer> endsAhead = new HashMap<>();
    Map<String, Integer> counts = new HashMap<>();
    Map<String, Set<String>> tracks = new HashMap<>();
    int unmatched = 0;
    for (DemoTrace.Event e : trace.events) {
      if ((e.packet().getSequenceFlags() & TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE) == 0) {
        continue; // jvm.jfr's self-contained packets; the TrackEvent API's need the sequence's state
      }
      // A track named by uuid is one track whatever sequence writes to it (a virtual thread's
      // events take whichever shared writer is free), as trace_processor keys slices by track.
      boolean shared = e.raw().hasTrackUuid();
      String key = shared ? "uuid/" + e.raw().getTrackUuid()
          : e.packet().getTrustedPacketSequenceId() + "/" + e.track();
      if (e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN) {
        if (endsAhead.getOrDefault(key, 0) > 0) {
          endsAhead.merge(key, -1, Integer::sum);
          counts.merge(e.name(), 1, Integer::sum);
          tracks.computeIfAbsent(e.name(), n -> new HashSet<>()).add(e.track());
        } else {
          open.computeIfAbsent(key, k -> new ArrayDeque<>()).push(e.name());
        }
      } else if (e.type() == TrackEvent.Type.TYPE_SLICE_END) {
        Deque<String> stack = open.get(key);
        if (stack == null || stack.isEmpty()) {
          if (shared) {
            endsAhead.merge(key, 1, Integer::sum);
          } else {
            unmatched++;
          }
          continue;
        }
        String name = stack.pop();
        counts.merge(name, 1, Integer::sum);
        tracks.computeIfAbsent(name, n -> new HashSet<>()).add(e.track());
      }
    }
    unmatched += endsAhead.values().stream().mapToInt(Integer::intValue).sum();
    int leftOpen = open.values().stream().mapToInt(Deque::size).sum();
    return new MethodSlices(counts, tracks, unmatched, leftOpen);
  }

  /** Slices jvm.jfr wrote for collections. */
  static long gcSlices(DemoTrace trace) {
    return trace.inCategory("jvm.gc").stream().filter(e -> e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN).count();
  }

  static String agentFlag(Path agentJar, String options) {
    return "-javaagent:" + agentJar + "=" + options;
  }
}
