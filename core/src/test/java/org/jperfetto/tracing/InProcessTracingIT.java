package org.jperfetto.tracing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jperfetto.os.Fds;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.testing.TraceHealth;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The in-process backend's lifecycle: states, misuse, close with sessions running, leftovers. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InProcessTracingIT {
  @TempDir
  Path dir;

  private final Category cat = Category.of("lifecycle");
  private final TrackEvent te = TrackEvent.builder().categories(cat).build();

  static TraceConfig config() {
    return TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
            DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME)))
        .build();
  }

  private InProcessTracing start(String name) throws IOException {
    return InProcessTracing.start(TracingProducer.builder(name).dataSource(te.dataSource()));
  }

  /** Names of the TrackEvent events in a trace file's bytes. */
  static long countTrackEvents(byte[] trace) throws IOException {
    return Trace.parseFrom(trace).getPacketList().stream().filter(TracePacket::hasTrackEvent).count();
  }

  @Test
  void servesOnlyInsideAPrivateDirectoryAndRemovesIt() throws Exception {
    Path socketDir;
    try (InProcessTracing tracing = start("private")) {
      socketDir = tracing.directory();
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socketDir)));
      assertTrue(tracing.producer().socketPath().startsWith(socketDir.toString()), tracing.producer().socketPath());
      assertTrue(tracing.consumerSocket().startsWith(socketDir.toString()), tracing.consumerSocket());
      assertTrue(tracing.producer().isConnected());
    }
    assertFalse(Files.exists(socketDir), "socket directory removed: " + socketDir);
  }

  @Test
  void aDataSourceNoProducerOffersIsLoggedAsAWarning() throws Exception {
    java.util.logging.Logger log = java.util.logging.Logger.getLogger(InProcessSession.class.getName());
    List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Handler handler = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord r) {
        if (r.getLevel() == java.util.logging.Level.WARNING) {
          warnings.add(r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    log.addHandler(handler);
    TraceConfig typo = config().toBuilder().addDataSources(TraceConfig.DataSource.newBuilder()
        .setConfig(DataSourceConfig.newBuilder().setName("track_events"))).build();
    try (InProcessTracing tracing = start("typo");
        InProcessSession _ = tracing.newSession(typo).start()) {
      assertEquals(List.of("no producer offers data source \"track_events\": the session records none of its "
          + "data (misspelt, or not registered with InProcessTracing?)"), warnings);
      warnings.clear();
      try (InProcessSession _ = tracing.newSession(config()).start()) {
        assertEquals(List.of(), warnings, "track_event is offered");
      }
      try (InProcessSession _ = tracing.newSession().start()) {
        assertEquals(List.of(), warnings, "the defaults name jvm.jfr for whoever registered it: no warning");
      }
    } finally {
      log.removeHandler(handler);
    }
  }

  @Test
  void theProducerWritesIntoAFourMebibyteSmbUnlessItAsksForAnother() throws Exception {
    try (InProcessTracing tracing = start("smb-default");
        InProcessSession _ = tracing.newSession(config()).start()) {
      assertEquals(InProcessTracing.DEFAULT_SMB_BYTES, tracing.producer().smbSizeBytes());
    }
    try (InProcessTracing tracing = InProcessTracing.start(
            TracingProducer.builder("smb-hint").smbSizeHint(512 << 10).dataSource(te.dataSource()));
        InProcessSession _ = tracing.newSession(config()).start()) {
      assertEquals(512 << 10, tracing.producer().smbSizeBytes());
    }
  }

  @Test
  void startingTwiceIsRefusedAndTheSessionKeepsRecording() throws Exception {
    try (InProcessTracing tracing = start("twice")) {
      InProcessSession s = tracing.newSession(config()).start();
      IllegalStateException e = assertThrows(IllegalStateException.class, s::start);
      assertTrue(e.getMessage().contains("state=STARTED"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> s.writeTo(dir.resolve("late")));
      assertThrows(IllegalStateException.class, s::readTrace, "no trace before stop");
      te.instant(cat, "after_second_start");
      s.stop();
      assertEquals(InProcessSession.State.STOPPED, s.state());
      assertEquals(1, countTrackEvents(s.readTrace()));
      assertThrows(IllegalStateException.class, s::start, "a stopped session does not start again");
    }
  }

  @Test
  void readIntoStreamsTheTraceAtStopAndLeavesTheStreamOpen() throws Exception {
    boolean[] closed = {false};
    java.io.ByteArrayOutputStream streamed = new java.io.ByteArrayOutputStream() {
      @Override
      public void close() {
        closed[0] = true;
      }
    };
    try (InProcessTracing tracing = start("streamed")) {
      InProcessSession s = tracing.newSession(config()).readInto(streamed);
      assertThrows(IllegalStateException.class, () -> s.writeTo(dir.resolve("both")), "one destination");
      assertThrows(IllegalStateException.class, () -> s.readInto(OutputStream.nullOutputStream()));
      s.start();
      for (int i = 0; i < 500; i++) {
        te.begin(cat, "streamed", "i", i);
        te.end(cat);
      }
      assertEquals(0, streamed.size(), "nothing is read before stop");
      s.stop();
      assertEquals(1000, countTrackEvents(streamed.toByteArray()), "500 begins and 500 ends, parseable");
      assertFalse(closed[0], "the caller's stream stays open");
      IllegalStateException e = assertThrows(IllegalStateException.class, s::readTrace);
      assertTrue(e.getMessage().contains("readInto"), e.getMessage());
      InProcessSession onDisk = tracing.newSession(config()).writeTo(dir.resolve("file"));
      assertThrows(IllegalStateException.class, () -> onDisk.readInto(streamed), "one destination");
      onDisk.stop();
    }
  }

  @Test
  void stopWithoutStartEndsTheSessionWithNothingTraced() throws Exception {
    Path file = dir.resolve("never.perfetto-trace");
    try (InProcessTracing tracing = start("never")) {
      InProcessSession memory = tracing.newSession(config());
      InProcessSession onDisk = tracing.newSession(config()).writeTo(file);
      assertEquals(2, tracing.sessions().size());
      memory.stop();
      onDisk.stop();
      memory.stop(); // again: nothing
      assertEquals(List.of(), tracing.sessions());
      assertEquals(InProcessSession.State.STOPPED, memory.state());
      assertArrayEquals(new byte[0], memory.readTrace());
      assertFalse(Files.exists(file), "a session never started creates no file");
      assertFalse(cat.isEnabled());
      assertThrows(IllegalStateException.class, memory::start);
      assertThrows(IllegalStateException.class, memory::flush);
    }
  }

  @Test
  void closingWhileSessionsRunCompletesTheirTraces() throws Exception {
    Path file = dir.resolve("closed.perfetto-trace");
    InProcessSession onDisk;
    InProcessSession memory;
    try (InProcessTracing tracing = start("close-running")) {
      onDisk = tracing.newSession(config()).writeTo(file).start();
      memory = tracing.newSession(config()).start();
      for (int i = 0; i < 50; i++) {
        te.begin(cat, "running", "i", i);
        te.end(cat);
      }
      assertTrue(onDisk.flush(), "an explicit flush is answered");
    }
    assertEquals(InProcessSession.State.STOPPED, onDisk.state());
    assertEquals(InProcessSession.State.STOPPED, memory.state());
    assertEquals(100, countTrackEvents(Files.readAllBytes(file)), "50 begins and 50 ends in a parseable file");
    assertEquals(100, countTrackEvents(memory.readTrace()));
    assertTrue(onDisk.error().isEmpty() && memory.error().isEmpty());
    assertFalse(cat.isEnabled());
  }

  @Test
  void aTraceFileThatCannotBeWrittenFailsStopAndNamesTheFile() throws Exception {
    Path full = Path.of("/dev/full"); // every write: ENOSPC
    try (InProcessTracing tracing = start("disk-full")) {
      InProcessSession s = tracing.newSession(config()).writeTo(full).start();
      for (int i = 0; i < 50; i++) {
        te.begin(cat, "lost", "i", i);
        te.end(cat);
      }
      IOException e = assertThrows(IOException.class, s::stop);
      assertTrue(e.getMessage().contains("/dev/full") && e.getMessage().contains("No space left"),
          e.getMessage());
      assertEquals(InProcessSession.State.STOPPED, s.state());
      assertTrue(s.error().orElseThrow().contains("writing the trace file /dev/full failed"),
          s.error().toString());
    }
  }

  @Test
  void aConfigTheServiceRefusesFailsStart() throws Exception {
    try (InProcessTracing tracing = start("refused")) {
      InProcessSession s = tracing.newSession(TraceConfig.newBuilder()
          .addDataSources(config().getDataSources(0)).build()); // no buffer
      IOException e = assertThrows(IOException.class, s::start);
      assertTrue(e.getMessage().contains("ended the session at start"), e.getMessage());
      assertEquals(InProcessSession.State.STOPPED, s.state());
      assertTrue(s.error().isPresent());
      assertEquals(List.of(), tracing.sessions());
      // The backend still works.
      try (InProcessSession _ = tracing.newSession(config()).start()) {
        assertTrue(cat.isEnabled());
      }
    }
  }

  @Test
  void leavesNoThreadsFdsOrFilesBehind() throws Exception {
    cycle(dir.resolve("warm-up")); // class loading, lazily created JDK descriptors
    Set<String> threadsBefore = threadNames();
    int fdsBefore = Fds.openFdCount();
    for (int i = 0; i < 3; i++) {
      cycle(dir.resolve("cycle" + i));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Set<String> extra;
    int fds;
    do {
      Thread.sleep(20);
      extra = threadNames().stream().filter(t -> !threadsBefore.contains(t)).collect(Collectors.toSet());
      fds = Fds.openFdCount();
    } while ((!extra.isEmpty() || fds > fdsBefore) && System.nanoTime() - deadline < 0);
    assertEquals(Set.of(), extra, "threads left running");
    assertTrue(fds <= fdsBefore, "fds before " + fdsBefore + ", after " + fds);
  }

  private void cycle(Path file) throws Exception {
    Path socketDir;
    try (InProcessTracing tracing = start("leak-check")) {
      socketDir = tracing.directory();
      try (InProcessSession _ = tracing.newSession(config()).writeTo(file).start()) {
        te.instant(cat, "cycle");
      }
      InProcessSession memory = tracing.newSession(config()).start();
      te.instant(cat, "cycle");
      memory.stop();
      assertEquals(1, countTrackEvents(memory.readTrace()));
    }
    assertEquals(1, countTrackEvents(Files.readAllBytes(file)));
    assertFalse(Files.exists(socketDir));
  }

  private static Set<String> threadNames() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> !n.startsWith("ForkJoinPool") && !n.equals("process reaper")
            && !n.startsWith("Common-Cleaner") && !n.startsWith("junit"))
        .collect(Collectors.toSet());
  }

  @Test
  void recordsWithNoConfigAtAllIntoAFileTraceProcessorOpensWithoutErrors() throws Exception {
    Path file = dir.resolve("defaults.perfetto-trace");
    try (InProcessTracing tracing = start("defaults")) {
      try (InProcessSession _ = tracing.newSession().writeTo(file).start()) {
        for (int i = 0; i < 100; i++) {
          try (var _ = te.slice(cat, "work", "i", i)) {
            te.instant(cat, "tick");
          }
        }
      }
    }
    Trace trace = Trace.parseFrom(Files.readAllBytes(file));
    assertEquals(List.of(), TraceHealth.problems(trace));
    TraceConfig recorded = trace.getPacketList().stream().filter(TracePacket::hasTraceConfig)
        .map(TracePacket::getTraceConfig).findFirst().orElseThrow();
    assertTrue(recorded.getWriteIntoFile());
    assertEquals(5000, recorded.getFlushPeriodMs(), "writeTo adds the flush period a write_into_file config needs");
    assertEquals(300, countTrackEvents(Files.readAllBytes(file)), "100 begins, 100 ends, 100 instants");
    String version = trace.getPacketList().stream().filter(TracePacket::hasSystemInfo)
        .map(p -> p.getSystemInfo().getTracingServiceVersion()).findFirst().orElseThrow();
    assertEquals(TracingProducer.SDK_VERSION, version, "service and producer name the same build");
  }
}
