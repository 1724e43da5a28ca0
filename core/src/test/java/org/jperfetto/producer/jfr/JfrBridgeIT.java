package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.producer.jfr.TraceSlices.Slice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/**
 * The test: a child JVM that collects, contends on a monitor and parks, traced with
 * {@code jvm.jfr} through jtraced's sockets, compared with the child's own JFR recording.
 */
@Timeout(120)
class JfrBridgeIT {
  static final String LEGACY_CONFIG = "groups=gc,locks,threads lock_threshold=1ms stack_depth=4";
  /** Events ending this long before the stop request must all be in the trace. */
  static final long STOP_MARGIN_NANOS = 20_000_000;

  @TempDir Path dir;

  @Test
  void traceHoldsWhatJfrRecordedOnTheRightThreadsAndLosesNothingAtStop() throws Exception {
    String producerSocket = dir.resolve("p.sock").toString();
    String consumerSocket = dir.resolve("c.sock").toString();
    Path jfrFile = dir.resolve("child.jfr");
    long enabledAt;
    long stopAt;
    long disabledAt;
    Map<String, Long> tids = new HashMap<>();
    List<TracePacket> packets = new ArrayList<>();
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
        TracingConsumer consumer = TracingConsumer.connect(consumerSocket)) {
      enabledAt = System.nanoTime();
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(32 * 1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
              DataSourceConfig.newBuilder().setName(JfrDataSource.NAME).setLegacyConfig(LEGACY_CONFIG)))
          .build());
      Process child = startChild(producerSocket, jfrFile);
      try (BufferedReader out =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
          Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8)) {
        for (String line = out.readLine(); !"WORKLOAD".equals(line); line = out.readLine()) {
          assertTrue(line != null, "child ended early; see " + dir.resolve("child.err"));
          if (line.startsWith("TID ")) {
            String[] f = line.split(" ");
            tids.put(f[1], Long.parseLong(f[2]));
          }
        }
        Thread.sleep(1500); // the burst runs; JFR holds up to a second of it when the stop comes
        stopAt = System.nanoTime();
        consumer.disableTracing().get(20, TimeUnit.SECONDS);
        TracingDisabled disabled = session.disabled().get(20, TimeUnit.SECONDS);
        disabledAt = System.nanoTime();
        assertTrue(disabled.ok(), disabled.error());
        consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
            .get(20, TimeUnit.SECONDS);
        in.write("STOPPED\n");
        in.flush();
        assertEquals("DUMPED", out.readLine());
      } finally {
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child exits");
      }
      assertEquals(0, child.exitValue());
    }
    List<RecordedEvent> jfr = RecordingFile.readAllEvents(jfrFile);
    TraceSlices trace = new TraceSlices(packets);

    // GC: each collection JFR saw while tracing is a slice with JFR's exact duration; the offset
    // between JFR's time and the trace's is one constant across all of them.
    Map<Long, Slice> gcSlices = new HashMap<>();
    for (Slice s : trace.slices) {
      if (s.category().equals("jvm.gc") && s.args().containsKey("cause")) {
        gcSlices.put((Long) s.args().get("gcId"), s);
      }
    }
    List<RecordedEvent> gcs = jfr.stream().filter(e -> e.getEventType().getName().equals("jdk.GarbageCollection"))
        .toList();
    assertFalse(gcSlices.isEmpty(), "GC slices in the trace");
    Long offset = null;
    int matched = 0;
    for (RecordedEvent gc : gcs) {
      Slice s = gcSlices.get((long) gc.getInt("gcId"));
      if (s == null) {
        continue; // before the data source started
      }
      matched++;
      assertEquals(gc.getDuration().toNanos(), s.duration(), "GC " + gc.getInt("gcId") + " duration as JFR's");
      assertEquals(gc.getString("name"), s.name());
      assertEquals(gc.getThread().getOSThreadId(), trace.tidOf(s.track()), "on the VM thread's track");
      long o = JfrEventMapper.epochNanos(gc.getStartTime()) - s.begin();
      if (offset == null) {
        offset = o;
      }
      assertTrue(Math.abs(o - offset) <= 2 * JfrClock.TOLERANCE_NANOS, "one clock offset: " + o + " vs " + offset);
    }
    assertEquals(gcSlices.size(), matched, "every GC slice is one JFR recorded");
    assertTrue(matched >= 2, "the workload's collections: " + matched);

    // Heap counters.
    assertFalse(trace.counter("JVM heap used").isEmpty());
    assertFalse(trace.counter("JVM heap committed").isEmpty());
    assertTrue(trace.counter("JVM heap used").stream().allMatch(c -> c.value() > 0));

    // Monitor and park slices on the right threads, matched by tid.
    List<Slice> enters = trace.slices.stream().filter(s -> s.name().equals("Monitor enter")
        && JvmWorkload.TestMonitor.class.getName().equals(s.args().get("monitorClass"))).toList();
    assertEquals(1, enters.size());
    assertEquals(tids.get("contender"), trace.tidOf(enters.get(0).track()));
    assertEquals("Locks", trace.trackName(enters.get(0).track()));
    assertTrue(((String) enters.get(0).args().get("stack")).contains("JvmWorkload"));
    long parkerTid = tids.get("parker");
    assertEquals(3, trace.slices.stream()
        .filter(s -> s.name().equals("Park") && trace.tidOf(s.track()) == parkerTid).count());

    // Timestamps inside the session window; slices nest on every track.
    for (long ts : trace.timestamps) {
      assertTrue(ts >= enabledAt && ts <= disabledAt,
          "timestamp " + ts + " outside [" + enabledAt + ", " + disabledAt + "]");
    }
    trace.assertProperlyNested();

    // Stop mid-burst: every park JFR recorded on the burst thread that ended before the stop is in
    // the trace, including the last second's, which JFR had not flushed yet when the stop came.
    long burstTid = tids.get("burst");
    long jfrOffset = offset;
    Map<Long, Slice> burstSlices = new HashMap<>();
    for (Slice s : trace.slices) {
      if (s.name().equals("Park") && trace.tidOf(s.track()) == burstTid) {
        burstSlices.put(s.begin(), s);
      }
    }
    int expected = 0;
    int lastSecond = 0;
    for (RecordedEvent park : jfr) {
      if (!park.getEventType().getName().equals("jdk.ThreadPark") || park.getThread() == null
          || park.getThread().getOSThreadId() != burstTid) {
        continue;
      }
      long begin = JfrEventMapper.epochNanos(park.getStartTime()) - jfrOffset;
      long end = begin + park.getDuration().toNanos();
      if (end > stopAt - STOP_MARGIN_NANOS) {
        continue;
      }
      expected++;
      if (end > stopAt - 1_000_000_000L) {
        lastSecond++;
      }
      Slice s = burstSlices.get(begin);
      assertTrue(s != null, "park at " + begin + " (" + (stopAt - end) / 1_000_000 + " ms before the stop) lost");
      assertEquals(park.getDuration().toNanos(), s.duration());
    }
    assertTrue(expected > 100, "burst parks recorded: " + expected);
    assertTrue(lastSecond > 50, "parks in the last second before the stop: " + lastSecond);
  }

  private Process startChild(String producerSocket, Path jfrFile) throws Exception {
    List<String> command = ChildJvm.command(List.of("-Xmx256m"), System.getProperty("java.class.path"),
        JfrChild.class.getName(), producerSocket, jfrFile.toString());
    Files.createDirectories(dir);
    return new ProcessBuilder(command).redirectError(dir.resolve("child.err").toFile()).start();
  }
}
