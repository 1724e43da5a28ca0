package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java stack samples end to end through jtraced: a thread spinning in a known hot method is sampled
 * on its own thread with that method as leaf, deep stacks are cut and marked, and the interning
 * follows the service's incremental state clears. Traces are decoded with interned data resolved.
 */
@Timeout(60)
class StackSamplesIT {
  static final String HOT = HotMethods.class.getName() + ".spin";

  @TempDir Path dir;
  JfrServiceFixture fixture;
  ServiceHost host;
  TracingProducer producer;
  TracingConsumer consumer;
  DataSource<?> ds;
  /** The encoder's samples and stack identity hits, read after the flush. */
  volatile long[] encoderStats;
  /** CLOCK_MONOTONIC (System.nanoTime) before the workload thread started and after it ended. */
  long startedNanos;
  long endedNanos;

  @BeforeEach
  void start() throws Exception {
    fixture = JfrServiceFixture.start(dir, "samples-it");
    host = fixture.host;
    producer = fixture.producer;
    ds = fixture.ds;
    consumer = fixture.consumer;
  }

  @AfterEach
  void stop() {
    fixture.close();
  }

  /** Records legacyConfig while a thread called name spins for millis at the given call depth. */
  DecodedSamples record(String legacyConfig, int clearPeriodMs, String name, int depth, long millis, long[] tid)
      throws Exception {
    return record(legacyConfig, clearPeriodMs, () -> HotMethods.start(name, depth, millis, tid));
  }

  /** Records legacyConfig while the thread workload starts runs; until it ended. */
  DecodedSamples record(String legacyConfig, int clearPeriodMs, java.util.function.Supplier<Thread> workload)
      throws Exception {
    TraceConfig.Builder config = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8 * 1024))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
            DataSourceConfig.newBuilder().setName(JfrDataSource.NAME).setLegacyConfig(legacyConfig)));
    if (clearPeriodMs > 0) {
      config.setIncrementalStateConfig(
          TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(clearPeriodMs));
    }
    TracingSession session = consumer.enableTracing(config.build());
    JfrDataSourceIT.await("jvm.jfr recording", () -> JfrDataSource.recordingInstances(ds) == 1);
    startedNanos = System.nanoTime();
    Thread t = workload.get();
    t.join();
    endedNanos = System.nanoTime();
    consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
    ds.trace(ctx -> {
      StackSampleEncoder e = ctx.state() instanceof JfrBridge b ? b.sampleEncoder() : null;
      if (e != null) {
        encoderStats = new long[] {e.samples(), e.stackHits()};
      }
    });
    consumer.disableTracing().get(20, TimeUnit.SECONDS);
    TracingDisabled d = session.disabled().get(20, TimeUnit.SECONDS);
    assertTrue(d.ok(), d.error());
    List<TracePacket> out = new ArrayList<>();
    consumer.readBuffers((slices, size) -> out.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
        .get(20, TimeUnit.SECONDS);
    return new DecodedSamples(out);
  }

  static String leaves(List<DecodedSamples.Sample> samples) {
    Map<String, Long> byLeaf = new TreeMap<>(samples.stream()
        .collect(Collectors.groupingBy(DecodedSamples.Sample::leaf, Collectors.counting())));
    return byLeaf.toString();
  }

  @Test
  void theHotMethodIsTheLeafOfItsThreadsSamples() throws Exception {
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=samples", 0, "jfr-hot", 0, 1500, tid);
    List<DecodedSamples.Sample> mine = trace.on(tid[0]);
    assertTrue(mine.size() >= 10, "samples on jfr-hot (tid " + tid[0] + "): " + mine.size()
        + " of " + trace.samples.size());
    long hot = mine.stream().filter(s -> s.leaf().equals(HOT)).count();
    assertTrue(hot >= 0.8 * mine.size(), hot + " of " + mine.size() + " samples have " + HOT
        + " as leaf: " + leaves(mine));
    assertEquals("jfr-hot", trace.threadNames.get(tid[0]), "the sampled thread is named");
    // On the trace clock: every sample of the thread lies within the thread's life as this JVM's
    // System.nanoTime saw it (JFR's time moved onto CLOCK_MONOTONIC, as for the slices).
    for (DecodedSamples.Sample x : mine) {
      assertTrue(x.ts() > startedNanos && x.ts() < endedNanos,
          "sample at " + x.ts() + " within the thread's run [" + startedNanos + ", " + endedNanos + "]");
    }
    // A stack JFR hands over again is the same object: found by identity, nothing interned anew.
    assertNotNull(encoderStats);
    System.out.println("stack samples: " + encoderStats[0] + ", found by identity: " + encoderStats[1]);
    assertTrue(encoderStats[1] >= encoderStats[0] / 2, "identity hits " + encoderStats[1] + " of " + encoderStats[0]);
    DecodedSamples.Sample s = mine.stream().filter(x -> x.leaf().equals(HOT)).findFirst().orElseThrow();
    assertEquals(ProcessHandle.current().pid(), s.pid());
    assertEquals(StackSampleEncoder.SOURCE, s.source());
    assertEquals("wall-time", s.timebase());
    DecodedSamples.DecodedFrame leaf = s.frames().get(s.frames().size() - 1);
    assertEquals("app", leaf.mapping(), "a class path class's frames go in the app loader's mapping");
    assertTrue(leaf.line() > 0, "line numbers kept: " + leaf);
    assertNotNull(leaf.kind(), "frame kind kept: " + leaf);
    assertTrue(s.frames().get(0).function().startsWith("java.lang.Thread."), "root first: " + s.frames());
    // The thread's Runnable is a lambda: its hidden class's frame is named as JFR names it.
    assertTrue(s.frames().stream().anyMatch(f -> f.function().startsWith(HotMethods.class.getName() + "$$Lambda")),
        "lambda frame: " + s.frames());
    assertTrue(s.frames().stream().anyMatch(f -> "java.base".equals(f.mapping())),
        "java.base frames: " + s.frames());
  }

  @Test
  void deepStacksAreCutAtTheDepthAndMarkedTruncated() throws Exception {
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=samples sample_depth=8", 0, "jfr-deep", 100, 1000, tid);
    List<DecodedSamples.Sample> mine = trace.on(tid[0]);
    assertTrue(mine.size() >= 5, "samples on jfr-deep: " + mine.size());
    for (DecodedSamples.Sample s : mine) {
      assertTrue(s.frames().size() <= 9, "at most 8 frames and the mark: " + s.frames());
      if (s.leaf().equals(HOT)) { // 100 calls deep: cut
        assertEquals(9, s.frames().size(), "8 frames and the mark: " + s.frames());
        assertEquals(StackSampleEncoder.TRUNCATED_FRAME, s.frames().get(0).function());
        assertEquals(HotMethods.class.getName() + ".deep", s.frames().get(1).function(), s.frames().toString());
      }
    }
    long hot = mine.stream().filter(s -> s.leaf().equals(HOT)).count();
    assertTrue(hot >= 0.8 * mine.size(), "leaf kept where the cut is at the root: " + leaves(mine));
  }

  @Test
  void internedStacksStartAfreshAfterEachIncrementalStateClear() throws Exception {
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=samples sample_period=10ms", 300, "jfr-cleared", 0, 2500, tid);
    List<DecodedSamples.Sample> mine = trace.on(tid[0]);
    assertTrue(mine.size() >= 10, "samples: " + mine.size());
    // Every sample decoded against its sequence's state since the last clear (DecodedSamples
    // fails otherwise); the sequence was cleared by the service more than once.
    // JFR hands samples over about once a second, so a clear takes effect at the next batch.
    long states = mine.stream().mapToInt(DecodedSamples.Sample::state).distinct().count();
    assertTrue(states >= 2, "samples decoded in " + states + " incremental states (clears: " + trace.clears + ")");
    assertTrue(mine.stream().filter(s -> s.leaf().equals(HOT)).count() >= 0.8 * mine.size(), leaves(mine));
  }

  @Test
  void aThreadBlockedInNativeCodeIsSampledWithANativeLeaf() throws Exception {
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=samples", 0, () -> Thread.ofPlatform().name("jfr-native").start(() -> {
      tid[0] = JvmWorkload.currentTid();
      try (java.net.ServerSocket server = new java.net.ServerSocket(0)) {
        server.setSoTimeout(1200);
        server.accept(); // nobody connects: blocked in the native accept until the timeout
      } catch (java.net.SocketTimeoutException expected) {
        // the end of the workload
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }));
    List<DecodedSamples.Sample> mine = trace.on(tid[0]);
    assertTrue(mine.size() >= 5, "native method samples on jfr-native: " + mine.size());
    // The leaf is the native method (a JNI one here), or the mark where JFR's innermost frame is not one.
    long nativeLeaf = mine.stream().filter(x -> "KIND_NATIVE".equals(x.frames().get(x.frames().size() - 1).kind()))
        .count();
    assertTrue(mine.stream().allMatch(x -> x.frames().stream().noneMatch(
        f -> f.function().equals(StackSampleEncoder.NATIVE_FRAME)) || x.leaf().equals(StackSampleEncoder.NATIVE_FRAME)),
        "the native mark is only ever the leaf");
    assertTrue(nativeLeaf >= 0.8 * mine.size(), "native leaves: " + nativeLeaf + " of " + mine.size() + ": "
        + mine.get(0).frames());
  }

  @Test
  void theCpuTimeSamplerWhereTheJvmHasIt() throws Exception {
    boolean offered = jdk.jfr.FlightRecorder.getFlightRecorder().getEventTypes().stream()
        .anyMatch(t -> t.getName().equals("jdk.CPUTimeSample"));
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=samples sampler=cpu sample_period=10ms", 0, "jfr-cpu", 0, 1500, tid);
    List<DecodedSamples.Sample> mine = trace.on(tid[0]);
    assertTrue(mine.size() >= 10, "samples on jfr-cpu: " + mine.size());
    assertEquals(offered ? "cpu-time" : "wall-time", mine.get(0).timebase(), "CPU-time sampler offered: " + offered);
    assertTrue(mine.stream().filter(x -> x.leaf().equals(HOT)).count() >= 0.8 * mine.size(), leaves(mine));
  }

  @Test
  void allocationSamplesReferToInternedCallstacks() throws Exception {
    DecodedSamples trace = record("groups=allocation allocation_throttle=500/s", 0,
        () -> Thread.ofPlatform().name("jfr-alloc").start(() -> HotMethods.allocate(1000)));
    assertTrue(trace.samples.isEmpty(), "no stack samples without the samples group");
    String allocating = HotMethods.class.getName() + ".allocate";
    List<DecodedSamples.EventStack> mine = trace.eventStacks.stream()
        .filter(x -> x.name().equals("Allocation sample") && x.leaf().equals(allocating)).toList();
    assertTrue(mine.size() >= 5, "allocation samples in " + allocating + ": " + mine.size() + " of "
        + trace.eventStacks.size() + ": " + trace.eventStacks.stream().map(x -> x.leaf()).distinct().toList());
  }

  @Test
  void noSamplesGroupNoSamples() throws Exception {
    long[] tid = new long[1];
    DecodedSamples trace = record("groups=default,-samples", 0, "jfr-unsampled", 0, 500, tid);
    assertEquals(0, trace.samples.size());
  }
}
