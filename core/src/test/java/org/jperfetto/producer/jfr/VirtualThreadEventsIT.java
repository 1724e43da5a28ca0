package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;
import jdk.jfr.consumer.RecordingStream;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.jfr.JvmEvent.Arg;
import org.jperfetto.producer.jfr.TraceSlices.Slice;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code vthreads} group with real events of the build JDK (25): a virtual thread pinned by a
 * native frame (see {@link VirtualThreadWorkload}) and a virtual thread whose scheduler refused it.
 */
@Timeout(60)
class VirtualThreadEventsIT {
  /** The pin: well above the configured threshold, and above JFR's default 20 ms too. */
  static final long PIN_MILLIS = 40;
  static final String CONFIG = "groups=vthreads pinned_threshold=5ms stack_depth=8";

  @TempDir Path dir;

  @Test
  void jfrRecordsAPinOnTheCarrierWithItsDuration() throws Exception {
    List<RecordedEvent> pins = new CopyOnWriteArrayList<>();
    long vtId;
    try (RecordingStream rs = new RecordingStream()) {
      rs.setSettings(JfrConfig.parse(CONFIG).settings());
      rs.onEvent("jdk.VirtualThreadPinned", pins::add);
      rs.startAsync();
      vtId = VirtualThreadWorkload.pinOnce(PIN_MILLIS);
      rs.stop();
    }
    List<RecordedEvent> ours = pins.stream()
        .filter(e -> e.getThread() != null && e.getThread().getJavaThreadId() == vtId).toList();
    assertEquals(1, ours.size(), "one pin of the virtual thread: " + pins);
    RecordedEvent pin = ours.get(0);
    assertTrue(pin.getThread().isVirtual());
    assertTrue(pin.getThread().getOSThreadId() <= 0,
        "a virtual thread has no OS tid: " + pin.getThread().getOSThreadId());
    RecordedThread carrier = pin.getValue("carrierThread");
    assertEquals(VirtualThreadWorkload.carrierTid(), carrier.getOSThreadId(), "JFR names the carrier we ran on");
    // JFR times the park inside the sleep: at least the sleep asked for, at most the sleep measured.
    long d = pin.getDuration().toNanos();
    assertTrue(d >= TimeUnit.MILLISECONDS.toNanos(PIN_MILLIS) && d <= VirtualThreadWorkload.pinnedNanos(),
        "pin " + d + " ns vs sleep measured " + VirtualThreadWorkload.pinnedNanos() + " ns");
    assertTrue(pin.getString("pinnedReason").contains("Native"), pin.getString("pinnedReason"));

    // The mapper: a slice with JFR's duration on the carrier's "Virtual threads" lane.
    JvmEvent.Slice s = (JvmEvent.Slice) new JfrEventMapper(JfrConfig.parse(CONFIG)).map(pin).get(0);
    assertEquals(pin.getDuration().toNanos(), s.durationNanos());
    assertEquals(JfrEventMapper.epochNanos(pin.getStartTime()), s.epochNanos());
    assertEquals(new JvmEvent.Lane(carrier.getOSThreadId(), carrier.getJavaName(), "Virtual threads"), s.lane());
    assertEquals("jvm.vthreads", s.category());
    assertEquals("Virtual thread pinned", s.name());
    assertTrue(s.args().contains(new Arg("pinnedReason", pin.getString("pinnedReason"))), s.args().toString());
    assertTrue(s.args().contains(new Arg("blockingOperation", pin.getString("blockingOperation"))),
        s.args().toString());
    assertTrue(s.args().contains(new Arg("virtualThread", VirtualThreadWorkload.NAME)), s.args().toString());
    assertTrue(s.args().contains(new Arg("virtualThreadId", vtId)), s.args().toString());
    assertTrue(s.stack().stream().anyMatch(f -> f.contains("Thread.sleep")), s.stack().toString());
  }

  @Test
  void thePinIsASliceOnTheCarriersTrackThroughTheBridge() throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    Path jfrFile = dir.resolve("own.jfr");
    List<TracePacket> packets = new ArrayList<>();
    long vtId;
    long enabledAt;
    long disabledAt;
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c));
        TracingProducer producer = TracingProducer.builder("vthreads-it").socketPath(p).start();
        TracingConsumer consumer = TracingConsumer.connect(c);
        Recording own = new Recording()) {
      DataSource<?> ds = JfrDataSource.register(producer);
      assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
      enabledAt = System.nanoTime();
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4 * 1024))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
              DataSourceConfig.newBuilder().setName(JfrDataSource.NAME).setLegacyConfig(CONFIG)))
          .build());
      JfrDataSourceIT.await("jvm.jfr recording", () -> JfrDataSource.recordingInstances(ds) == 1);
      own.setSettings(JfrConfig.parse(CONFIG).settings());
      own.start();
      vtId = VirtualThreadWorkload.pinOnce(PIN_MILLIS);
      own.stop();
      own.dump(jfrFile);
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
      consumer.disableTracing().get(20, TimeUnit.SECONDS);
      TracingDisabled d = session.disabled().get(20, TimeUnit.SECONDS);
      disabledAt = System.nanoTime();
      assertTrue(d.ok(), d.error());
      consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
          .get(20, TimeUnit.SECONDS);
    }
    List<RecordedEvent> jfrPins = RecordingFile.readAllEvents(jfrFile).stream()
        .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")
            && e.getThread().getJavaThreadId() == vtId)
        .toList();
    assertEquals(1, jfrPins.size(), "JFR's own recording has the pin");
    RecordedEvent pin = jfrPins.get(0);

    TraceSlices trace = new TraceSlices(packets);
    List<Slice> pinned = trace.slices.stream().filter(s -> s.name().equals("Virtual thread pinned")
        && Long.valueOf(vtId).equals(s.args().get("virtualThreadId"))).toList();
    assertEquals(1, pinned.size(), "one pinned slice for the virtual thread: " + trace.slices);
    Slice s = pinned.get(0);
    assertEquals(pin.getDuration().toNanos(), s.duration(), "JFR's duration to the nanosecond");
    assertTrue(s.duration() >= TimeUnit.MILLISECONDS.toNanos(PIN_MILLIS), "at least the sleep: " + s.duration());
    assertEquals(VirtualThreadWorkload.carrierTid(), trace.tidOf(s.track()), "on the carrier's thread track");
    assertEquals("Virtual threads", trace.trackName(s.track()));
    // The lane hangs under the carrier's own thread track, which names this process.
    long carrierTrack = trace.tracks.get(s.track()).getParentUuid();
    assertEquals(ProcessHandle.current().pid(), trace.tracks.get(carrierTrack).getThread().getPid());
    assertEquals("jvm.vthreads", s.category());
    assertEquals(VirtualThreadWorkload.NAME, s.args().get("virtualThread"));
    assertTrue(((String) s.args().get("pinnedReason")).contains("Native"), s.args().toString());
    assertTrue(s.begin() >= enabledAt && s.end() <= disabledAt,
        "inside the session window [" + enabledAt + ", " + disabledAt + "]: " + s);
    trace.assertProperlyNested();
  }

  @Test
  void aRefusedSubmitBecomesAnInstant() throws Exception {
    Path file = dir.resolve("submit.jfr");
    List<String> command = ChildJvm.command(List.of("--add-opens", "java.base/java.lang=ALL-UNNAMED"),
        System.getProperty("java.class.path"), VirtualThreadSubmitFailedChild.class.getName(), file.toString());
    Process child = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve("child.out").toFile()).start();
    assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child exits");
    assertEquals(0, child.exitValue(), "child failed; see " + dir.resolve("child.out"));
    List<RecordedEvent> failed = RecordingFile.readAllEvents(file).stream()
        .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadSubmitFailed")).toList();
    assertFalse(failed.isEmpty(), "JFR recorded the refused submit");
    RecordedEvent e = failed.get(0);
    assertEquals(VirtualThreadSubmitFailedChild.MESSAGE, e.getString("exceptionMessage"));

    List<JvmEvent> out = new JfrEventMapper(JfrConfig.parse("groups=vthreads")).map(e);
    assertEquals(1, out.size());
    JvmEvent.Instant i = (JvmEvent.Instant) out.get(0);
    assertEquals("Virtual thread submit failed", i.name());
    assertEquals("jvm.vthreads", i.category());
    assertEquals(JfrEventMapper.epochNanos(e.getStartTime()), i.epochNanos());
    // The submitting thread (here the platform "main" thread) is the event thread: its lane.
    assertEquals(e.getThread().getOSThreadId(), i.lane().tid());
    assertTrue(i.lane().isThread());
    assertEquals("Virtual threads", i.lane().lane());
    assertTrue(i.args().contains(new Arg("javaThreadId", e.getLong("javaThreadId"))), i.args().toString());
    assertTrue(i.args().contains(new Arg("exceptionMessage", VirtualThreadSubmitFailedChild.MESSAGE)),
        i.args().toString());
  }
}
