package org.jperfetto.service.ipc;

import static org.jperfetto.service.ipc.SessionIT.config;
import static org.jperfetto.service.ipc.SessionIT.packet;
import static org.jperfetto.service.ipc.SessionIT.range;
import static org.jperfetto.service.ipc.SessionIT.read;
import static org.jperfetto.service.ipc.SessionIT.stopAndRead;
import static org.jperfetto.service.ipc.SessionIT.testPackets;
import static org.jperfetto.service.ipc.SessionIT.uid;
import static org.jperfetto.service.ipc.SessionIT.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 6 over the real consumer socket: each ConsumerPort method and session-management feature
 * through {@link TracingConsumer} against a {@link ServiceHost}, with socket producers.
 */
@Timeout(30)
class ConsumerPortFeaturesIT extends SocketFixture {
  static final TraceConfig.BufferConfig.FillPolicy RING = TraceConfig.BufferConfig.FillPolicy.RING_BUFFER;
  static final long SEC = 10;

  static TraceConfig ring(int kb) {
    return config(kb, RING);
  }

  /** Writes packets from..from+count-1 of writer 1 (counter = writerTag) and commits. */
  static void write(SocketProducer p, SmbWriter w, int writerTag, int from, int count) throws Exception {
    for (int i = from; i < from + count; i++) {
      assertTrue(w.write(packet(writerTag, i, 40), false));
    }
    p.commit();
  }

  static List<Integer> seqs(List<TracePacket> packets, long writerTag) throws Exception {
    return testPackets(packets, uid()).getOrDefault(writerTag, List.of());
  }

  static byte[] fileBytes(int fd) throws Exception {
    long size = MemFd.size(fd);
    if (size == 0) {
      return new byte[0];
    }
    try (Arena arena = Arena.ofConfined()) {
      return SharedMapping.map(fd, size, arena).toArray(ValueLayout.JAVA_BYTE);
    }
  }

  static Trace fileTrace(int fd) throws Exception {
    return Trace.parseFrom(fileBytes(fd));
  }

  // ---------------------------------------------------------------------------------------------
  // write_into_file

  @Test
  void writeIntoFileDrainsEveryPeriodWithoutLossOrRepeatAndOnStop() throws Exception {
    SocketProducer p = producer("to-file");
    TracingConsumer c = consumer();
    int fd = MemFd.create("trace", 0);
    try {
      TracingSession session = c.enableTracing(ring(256).toBuilder().setWriteIntoFile(true)
          .setFileWritePeriodMs(1).build(), fd); // raised to the 100 ms minimum
      SmbWriter w = p.startedWriter(1);
      write(p, w, 3, 0, 10);
      long t0 = System.nanoTime();
      waitFor(() -> parsedSeqs(fd).size() == 10);
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), "a drain within the period, not at 5 s");
      write(p, w, 3, 10, 10);
      waitFor(() -> parsedSeqs(fd).size() == 20);
      write(p, w, 3, 20, 5); // left for the last drain
      c.disableTracing().get(SEC, TimeUnit.SECONDS);
      TracingDisabled disabled = session.disabled().get(SEC, TimeUnit.SECONDS);
      assertTrue(disabled.ok(), disabled.error());
      Trace t = fileTrace(fd);
      assertEquals(range(25), seqs(t.getPacketList(), 3), "each packet once, in order");
      assertEquals(1, t.getPacketList().stream().filter(TracePacket::hasTraceConfig).count());
      assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceStats), "the last drain on stop");
      long end = MemFd.size(fd);
      Thread.sleep(300);
      assertEquals(end, MemFd.size(fd), "nothing written after the stop");
    } finally {
      Fds.close(fd);
    }
  }

  private static List<Integer> parsedSeqs(int fd) {
    try {
      return seqs(fileTrace(fd).getPacketList(), 3);
    } catch (Exception e) {
      return List.of();
    }
  }

  @Test
  void writeIntoFileStopsTheSessionAtMaxFileSize() throws Exception {
    SocketProducer p = producer("to-file");
    TracingConsumer c = consumer();
    int fd = MemFd.create("trace", 0);
    try {
      TracingSession session = c.enableTracing(ring(256).toBuilder().setWriteIntoFile(true)
          .setFileWritePeriodMs(100).setMaxFileSizeBytes(3000).build(), fd);
      SmbWriter w = p.startedWriter(1);
      write(p, w, 3, 0, 200);
      TracingDisabled disabled = session.disabled().get(SEC, TimeUnit.SECONDS);
      assertTrue(disabled.ok(), "a full file ends the session cleanly: " + disabled.error());
      p.await(CmdCase.STOP_DATA_SOURCE);
      long size = MemFd.size(fd);
      assertTrue(size <= 3000 && size > 1000, "size " + size);
      List<Integer> got = seqs(fileTrace(fd).getPacketList(), 3);
      assertFalse(got.isEmpty());
      assertEquals(range(got.size()), got, "a prefix, without gaps");
    } finally {
      Fds.close(fd);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // StartTracing, ChangeTraceConfig, Flush flags

  @Test
  void deferredStartSetsUpAndWaitsForStartTracing() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(ring(64).toBuilder().setDeferredStart(true).build());
    p.await(CmdCase.SETUP_DATA_SOURCE);
    p.expectNo(CmdCase.START_DATA_SOURCE, 300);
    c.startTracing().get(SEC, TimeUnit.SECONDS);
    SmbWriter w = p.startedWriter(1);
    write(p, w, 1, 0, 10);
    assertEquals(range(10), seqs(stopAndRead(c, session), 1));
  }

  @Test
  void changeTraceConfigWidensTheProducerFiltersAndRefusesOtherChanges() throws Exception {
    SocketProducer a = producer("app_a");
    SocketProducer b = producer("app_b");
    TracingConsumer c = consumer();
    TraceConfig cfg = ring(64);
    TraceConfig onlyA = cfg.toBuilder().setDataSources(0, cfg.getDataSources(0).toBuilder()
        .addProducerNameFilter("app_a")).build();
    c.enableTracing(onlyA);
    a.await(CmdCase.START_DATA_SOURCE);
    b.expectNo(CmdCase.START_DATA_SOURCE, 200);
    assertThrows(ExecutionException.class, () -> c.changeTraceConfig(onlyA.toBuilder().setDurationMs(5).build())
        .get(SEC, TimeUnit.SECONDS), "only producer filters may change");
    b.expectNo(CmdCase.SETUP_DATA_SOURCE, 100);
    TraceConfig both = cfg.toBuilder().setDataSources(0, cfg.getDataSources(0).toBuilder()
        .addProducerNameRegexFilter("app_.*")).build();
    c.changeTraceConfig(both).get(SEC, TimeUnit.SECONDS);
    b.await(CmdCase.START_DATA_SOURCE);
    a.expectNo(CmdCase.START_DATA_SOURCE, 200);
  }

  @Test
  void flushFlagsReachTheProducersAsSent() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    c.enableTracing(ring(64));
    p.await(CmdCase.START_DATA_SOURCE);
    FlushFlags flags = FlushFlags.of(FlushFlags.Initiator.CONSUMER_SDK, FlushFlags.Reason.EXPLICIT);
    c.flush(Duration.ofSeconds(5), flags).get(SEC, TimeUnit.SECONDS);
    assertEquals(flags.bits(), p.await(CmdCase.FLUSH).getFlush().getFlags());
    c.flush(Duration.ofSeconds(5), FlushFlags.CMD_TRACE_STOP).get(SEC, TimeUnit.SECONDS);
    assertEquals(FlushFlags.CMD_TRACE_STOP.bits(), p.await(CmdCase.FLUSH).getFlush().getFlags());
  }

  // ---------------------------------------------------------------------------------------------
  // Detach / Attach

  @Test
  void detachedSessionOutlivesItsConnectionAndAttachGivesTheConfigBack() throws Exception {
    SocketProducer p = producer("app");
    TraceConfig cfg = ring(64);
    try (TracingConsumer first = TracingConsumer.connect(consumerSocket)) {
      first.enableTracing(cfg);
      p.await(CmdCase.START_DATA_SOURCE);
      first.detach("key1").get(SEC, TimeUnit.SECONDS);
    }
    p.expectNo(CmdCase.STOP_DATA_SOURCE, 300);
    SmbWriter w = p.writer(1, p.targetBuffers.values().iterator().next());
    write(p, w, 1, 0, 5);
    TracingConsumer second = consumer();
    assertThrows(ExecutionException.class, () -> second.attach("wrong").get(SEC, TimeUnit.SECONDS));
    TracingSession attached = second.attach("key1").get(SEC, TimeUnit.SECONDS);
    assertEquals(cfg, attached.traceConfig(), "Attach gives the config back");
    assertThrows(ExecutionException.class, () -> consumer().attach("key1").get(SEC, TimeUnit.SECONDS),
        "attached already");
    assertEquals(range(5), seqs(stopAndRead(second, attached), 1));
  }

  // ---------------------------------------------------------------------------------------------
  // GetTraceStats, ObserveEvents, QueryServiceState, QueryCapabilities, SaveTraceForBugreport

  @Test
  void traceStatsCountWhatHappened() throws Exception {
    SocketProducer p = producer("app");
    producer("idle");
    TracingConsumer c = consumer();
    c.enableTracing(ring(256));
    SmbWriter w = p.startedWriter(1);
    for (int i = 0; i < 20; i++) {
      boolean big = i % 4 == 0; // the 5 big packets span chunks and get patched
      assertTrue(w.write(packet(1, i, big ? 3000 : 50), big));
    }
    p.commit();
    TraceStats st = c.getTraceStats().get(SEC, TimeUnit.SECONDS);
    assertEquals(2, st.getProducersConnected());
    assertEquals(1, st.getTracingSessions());
    assertEquals(1, st.getBufferStatsCount());
    TraceStats.BufferStats b = st.getBufferStats(0);
    assertEquals(256 * 1024, b.getBufferSize());
    assertTrue(b.getBytesWritten() > 5 * 3000, "bytes_written " + b.getBytesWritten());
    assertTrue(b.getChunksWritten() >= 15, "chunks_written " + b.getChunksWritten());
    assertEquals(5, b.getPatchesSucceeded());
    assertEquals(0, b.getPatchesFailed());
    assertEquals(0, b.getBytesRead());
    assertEquals(0, b.getAbiViolations());
    assertEquals(range(20), seqs(read(c), 1));
    TraceStats after = c.getTraceStats().get(SEC, TimeUnit.SECONDS);
    assertTrue(after.getBufferStats(0).getBytesRead() >= b.getBytesWritten(), after.toString());
    assertTrue(after.getBufferStats(0).getChunksRead() >= b.getChunksWritten());
  }

  @Test
  void observeEventsReportsInstanceStatesAndAllDataSourcesStarted() throws Exception {
    SocketProducer p = closeLater(SocketProducer.connect(producerSocket, "app",
        List.of(DataSourceDescriptor.newBuilder().setName(DS).setWillNotifyOnStart(true).build())));
    TracingConsumer c = consumer();
    BlockingQueue<ObservableEvents> events = new LinkedBlockingQueue<>();
    c.observeEvents(List.of(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES,
        ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), events::add);
    TracingSession session = c.enableTracing(ring(64));
    long id = p.await(CmdCase.START_DATA_SOURCE).getStartDataSource().getNewInstanceId();
    assertEquals(null, events.poll(200, TimeUnit.MILLISECONDS), "starting, not started yet");
    p.notifyStarted(id);
    ObservableEvents.DataSourceInstanceStateChange change = nextEvent(events, true).getInstanceStateChanges(0);
    assertEquals("app", change.getProducerName());
    assertEquals(DS, change.getDataSourceName());
    assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED, change.getState());
    assertTrue(nextEvent(events, false).getAllDataSourcesStarted());
    c.disableTracing().get(SEC, TimeUnit.SECONDS);
    assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED,
        nextEvent(events, true).getInstanceStateChanges(0).getState());
    session.disabled().get(SEC, TimeUnit.SECONDS);
  }

  private static ObservableEvents nextEvent(BlockingQueue<ObservableEvents> q, boolean instanceChange)
      throws InterruptedException {
    while (true) {
      ObservableEvents e = q.poll(SEC, TimeUnit.SECONDS);
      if (e == null) {
        throw new AssertionError("no " + (instanceChange ? "instance state" : "all started") + " event");
      }
      if (instanceChange ? e.getInstanceStateChangesCount() > 0 : e.getAllDataSourcesStarted()) {
        return e;
      }
    }
  }

  @Test
  void queryServiceStateListsProducersDescriptorsAndTheCallersSession() throws Exception {
    closeLater(SocketProducer.connect(producerSocket, "app", List.of(DataSourceDescriptor.newBuilder()
        .setName(DS).setWillNotifyOnStop(true).setHandlesIncrementalStateClear(true).build())));
    TracingConsumer c = consumer();
    c.enableTracing(ring(64).toBuilder().setUniqueSessionName("mine").build());
    waitFor(() -> c.queryServiceState(true).join().getNumSessionsStarted() == 1);
    TracingServiceState st = c.queryServiceState(false).get(SEC, TimeUnit.SECONDS);
    assertEquals(1, st.getProducersCount());
    TracingServiceState.Producer prod = st.getProducers(0);
    assertEquals("app", prod.getName());
    assertEquals(uid(), prod.getUid());
    assertEquals(ProcessHandle.current().pid(), prod.getPid());
    assertEquals(1, st.getDataSourcesCount());
    assertEquals(prod.getId(), st.getDataSources(0).getProducerId());
    DataSourceDescriptor d = st.getDataSources(0).getDsDescriptor();
    assertEquals(DS, d.getName());
    assertTrue(d.getWillNotifyOnStop() && d.getHandlesIncrementalStateClear(), d.toString());
    assertEquals(1, st.getNumSessions());
    assertEquals(1, st.getTracingSessionsCount());
    TracingServiceState.TracingSession mine = st.getTracingSessions(0);
    assertEquals("mine", mine.getUniqueSessionName());
    assertEquals(List.of(64), mine.getBufferSizeKbList());
    assertTrue(mine.getIsStarted());
    assertEquals(uid(), mine.getConsumerUid());
    TracingServiceState sessionsOnly = c.queryServiceState(true).get(SEC, TimeUnit.SECONDS);
    assertEquals(0, sessionsOnly.getProducersCount());
    assertEquals(0, sessionsOnly.getDataSourcesCount());
    assertEquals(1, sessionsOnly.getTracingSessionsCount());
  }

  @Test
  void capabilitiesAndSaveTraceForBugreport() throws Exception {
    TracingConsumer c = consumer();
    var caps = c.queryCapabilities().get(SEC, TimeUnit.SECONDS);
    assertTrue(caps.getHasQueryCapabilities());
    assertTrue(caps.getHasCloneSession());
    assertFalse(caps.getHasTraceConfigOutputPath());
    assertTrue(caps.getObservableEventsList().containsAll(List.of(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES,
        ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED, ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT)));
    var br = c.saveTraceForBugreport().get(SEC, TimeUnit.SECONDS);
    assertFalse(br.getSuccess());
    assertTrue(br.getMsg().contains("not supported"), br.getMsg());
  }

  // ---------------------------------------------------------------------------------------------
  // CloneSession

  @Test
  void cloneByNameAndByIdSnapshotsTheBuffersWhileTheOriginalRuns() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer owner = consumer();
    TracingSession original = owner.enableTracing(ring(256).toBuilder().setUniqueSessionName("s1").build());
    SmbWriter w = p.startedWriter(1);
    write(p, w, 1, 0, 20);

    TracingConsumer byName = consumer();
    CloneSessionResponse r = byName.cloneSession(
        CloneSessionRequest.newBuilder().setUniqueSessionName("s1").build(), -1).get(SEC, TimeUnit.SECONDS);
    assertTrue(r.getSuccess(), r.getError());
    assertTrue(r.getUuidMsb() != 0 || r.getUuidLsb() != 0, "the clone has its own trace uuid");
    GetAsyncCommandResponse.Flush flush = p.await(CmdCase.FLUSH).getFlush();
    assertEquals(FlushFlags.of(FlushFlags.Initiator.TRACED, FlushFlags.Reason.TRACE_CLONE).bits(), flush.getFlags(),
        "the clone flushes first, flagged as upstream flags it");
    assertEquals(range(20), seqs(read(byName), 1));

    write(p, w, 1, 20, 5);
    long id = byName.queryServiceState(true).get(SEC, TimeUnit.SECONDS).getTracingSessionsList().stream()
        .filter(s -> s.getUniqueSessionName().equals("s1") && s.getIsStarted()).findFirst().orElseThrow().getId();
    TracingConsumer byId = consumer();
    r = byId.cloneSession(CloneSessionRequest.newBuilder().setSessionId(id).build(), -1).get(SEC, TimeUnit.SECONDS);
    assertTrue(r.getSuccess(), r.getError());
    assertEquals(range(25), seqs(read(byId), 1));

    r = consumer().cloneSession(CloneSessionRequest.newBuilder().setUniqueSessionName("nope").build(), -1)
        .get(SEC, TimeUnit.SECONDS);
    assertFalse(r.getSuccess());
    assertTrue(r.getError().contains("not found"), r.getError());

    p.expectNo(CmdCase.STOP_DATA_SOURCE, 100);
    write(p, w, 1, 25, 5);
    assertEquals(range(30), seqs(stopAndRead(owner, original), 1), "the clones took nothing from the original");
  }

  @Test
  void cloneOfAWriteIntoFileSessionGoesIntoThePassedFileAndOtherClonesIgnoreIt() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer owner = consumer();
    int original = MemFd.create("original", 0);
    int copy = MemFd.create("copy", 0);
    try {
      TracingSession session = owner.enableTracing(ring(256).toBuilder().setWriteIntoFile(true)
          .setFileWritePeriodMs(100).setUniqueSessionName("wif").build(), original);
      SmbWriter w = p.startedWriter(1);
      write(p, w, 3, 0, 10);
      waitFor(() -> parsedSeqs(original).size() == 10);
      write(p, w, 3, 10, 5); // in the buffer or the file: the clone has it either way

      CloneSessionResponse none = consumer().cloneSession(
          CloneSessionRequest.newBuilder().setUniqueSessionName("wif").build(), -1).get(SEC, TimeUnit.SECONDS);
      assertFalse(none.getSuccess());
      assertTrue(none.getError().contains("a file descriptor is required"), none.getError());

      TracingConsumer cloner = consumer();
      CloneSessionResponse r = cloner.cloneSession(
          CloneSessionRequest.newBuilder().setUniqueSessionName("wif").build(), copy).get(SEC, TimeUnit.SECONDS);
      assertTrue(r.getSuccess(), r.getError());
      assertTrue(r.getWasWriteIntoFile());
      assertEquals(range(15), parsedSeqs(copy), "the original's file so far, then its flushed buffers");

      write(p, w, 3, 15, 5);
      owner.disableTracing().get(SEC, TimeUnit.SECONDS);
      assertTrue(session.disabled().get(SEC, TimeUnit.SECONDS).ok());
      assertEquals(range(20), parsedSeqs(original), "the original kept running and lost nothing");
      assertEquals(range(15), parsedSeqs(copy), "the clone's file is its own");
    } finally {
      Fds.close(original);
      Fds.close(copy);
    }
  }

  @Test
  void cloneOfABufferSessionIgnoresAPassedFile() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer owner = consumer();
    owner.enableTracing(ring(64).toBuilder().setUniqueSessionName("buf").build());
    write(p, p.startedWriter(1), 1, 0, 6);
    int fd = MemFd.create("unused", 0);
    try {
      TracingConsumer cloner = consumer();
      CloneSessionResponse r = cloner.cloneSession(
          CloneSessionRequest.newBuilder().setUniqueSessionName("buf").build(), fd).get(SEC, TimeUnit.SECONDS);
      assertTrue(r.getSuccess(), r.getError());
      assertFalse(r.getWasWriteIntoFile());
      assertEquals(0, MemFd.size(fd));
      assertEquals(range(6), seqs(read(cloner), 1));
    } finally {
      Fds.close(fd);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Triggers (activated by socket producers)

  static TraceConfig withTriggers(TraceConfig base, TraceConfig.TriggerConfig.TriggerMode mode, int timeoutMs,
      String name, String producerRegex, int stopDelayMs) {
    return base.toBuilder().setTriggerConfig(TraceConfig.TriggerConfig.newBuilder().setTriggerMode(mode)
        .setTriggerTimeoutMs(timeoutMs).addTriggers(TraceConfig.TriggerConfig.Trigger.newBuilder()
            .setName(name).setProducerNameRegex(producerRegex).setStopDelayMs(stopDelayMs))).build();
  }

  @Test
  void startTracingTriggerMatchesTheProducerNameAndRunsForStopDelay() throws Exception {
    SocketProducer p = producer("app");
    SocketProducer other = producer("other");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(withTriggers(ring(64),
        TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 10_000, "go", "ap+", 300));
    p.await(CmdCase.SETUP_DATA_SOURCE);
    other.activateTriggers("go");
    p.expectNo(CmdCase.START_DATA_SOURCE, 200);
    long t0 = System.nanoTime();
    p.activateTriggers("unrelated", "go");
    SmbWriter w = p.startedWriter(1);
    write(p, w, 1, 0, 3);
    TracingDisabled d = session.disabled().get(SEC, TimeUnit.SECONDS);
    assertTrue(d.ok(), d.error());
    assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(250), "stop_delay_ms became the duration");
    List<TracePacket> packets = read(c);
    assertEquals(range(3), seqs(packets, 1));
    TracePacket trig = packets.stream().filter(TracePacket::hasTrigger).findFirst().orElseThrow();
    assertEquals("go", trig.getTrigger().getTriggerName());
    assertEquals("app", trig.getTrigger().getProducerName());
    assertEquals(uid(), trig.getTrigger().getTrustedProducerUid());
  }

  @Test
  void startTracingTriggerTimeoutEndsTheSessionUnstarted() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(withTriggers(ring(64),
        TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 200, "go", "", 0));
    assertTrue(session.disabled().get(SEC, TimeUnit.SECONDS).ok());
    p.activateTriggers("go");
    p.expectNo(CmdCase.START_DATA_SOURCE, 200);
  }

  @Test
  void stopTracingTriggerStopsAfterStopDelayAndHoldsTheDataBackUntilThen() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(withTriggers(ring(64),
        TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 60_000, "stop", "", 200));
    SmbWriter w = p.startedWriter(1);
    write(p, w, 1, 0, 4);
    assertEquals(List.of(), seqs(read(c), 1), "nothing handed out before the trigger");
    p.activateTriggers("stop");
    assertFalse(session.disabled().isDone(), "stop_delay_ms not over yet");
    assertTrue(session.disabled().get(SEC, TimeUnit.SECONDS).ok());
    p.await(CmdCase.STOP_DATA_SOURCE);
    assertEquals(range(4), seqs(read(c), 1));

    TracingConsumer c2 = consumer();
    TracingSession timedOut = c2.enableTracing(withTriggers(ring(64),
        TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 200, "stop", "", 0));
    assertTrue(timedOut.disabled().get(SEC, TimeUnit.SECONDS).ok(), "trigger_timeout_ms ends it");
  }

  @Test
  void cloneSnapshotTriggerTellsTheObservingConsumerAndTheSessionRuns() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    BlockingQueue<ObservableEvents> events = new LinkedBlockingQueue<>();
    c.observeEvents(List.of(ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT), events::add);
    TracingSession session = c.enableTracing(withTriggers(ring(64),
        TraceConfig.TriggerConfig.TriggerMode.CLONE_SNAPSHOT, 60_000, "snap", "app", 50));
    p.await(CmdCase.START_DATA_SOURCE);
    p.activateTriggers("snap");
    ObservableEvents e = events.poll(SEC, TimeUnit.SECONDS);
    assertTrue(e != null && e.hasCloneTriggerHit(), String.valueOf(e));
    assertEquals("snap", e.getCloneTriggerHit().getTriggerName());
    assertEquals("app", e.getCloneTriggerHit().getProducerName());
    assertEquals(50, e.getCloneTriggerHit().getTriggerDelayMs());
    p.expectNo(CmdCase.STOP_DATA_SOURCE, 100);
    assertFalse(session.disabled().isDone(), "the session keeps running");
  }

  // ---------------------------------------------------------------------------------------------
  // Session options

  @Test
  void builtinDataSourceSwitchesLeaveOutServicePackets() throws Exception {
    TracingConsumer c = consumer();
    TracingSession on = c.enableTracing(ring(64));
    List<TracePacket> full = stopAndRead(c, on);
    assertTrue(full.stream().anyMatch(TracePacket::hasTraceConfig));
    assertTrue(full.stream().anyMatch(TracePacket::hasClockSnapshot));
    c.freeBuffers().get(SEC, TimeUnit.SECONDS);
    TracingSession off = c.enableTracing(ring(64).toBuilder().setBuiltinDataSources(
        TraceConfig.BuiltinDataSource.newBuilder().setDisableTraceConfig(true).setDisableSystemInfo(true)
            .setDisableClockSnapshotting(true).setDisableServiceEvents(true)).build());
    List<TracePacket> bare = stopAndRead(c, off);
    assertFalse(bare.stream().anyMatch(pk -> pk.hasTraceConfig() || pk.hasSystemInfo() || pk.hasClockSnapshot()
        || pk.hasServiceEvent()), bare.toString());
    assertTrue(bare.stream().anyMatch(TracePacket::hasTraceUuid));
  }

  @Test
  void clearPeriodSendsClearIncrementalStateAndFlushPeriodSendsPeriodicFlushes() throws Exception {
    SocketProducer p = closeLater(SocketProducer.connect(producerSocket, "app", List.of(
        DataSourceDescriptor.newBuilder().setName(DS).setHandlesIncrementalStateClear(true).build())));
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(ring(64).toBuilder().setFlushPeriodMs(100)
        .setIncrementalStateConfig(TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(100)).build());
    long id = p.await(CmdCase.START_DATA_SOURCE).getStartDataSource().getNewInstanceId();
    long periodic = FlushFlags.of(FlushFlags.Initiator.TRACED, FlushFlags.Reason.PERIODIC).bits();
    for (int i = 0; i < 2; i++) {
      assertEquals(List.of(id),
          p.await(CmdCase.CLEAR_INCREMENTAL_STATE).getClearIncrementalState().getDataSourceIdsList());
      GetAsyncCommandResponse.Flush f = p.await(CmdCase.FLUSH).getFlush();
      assertEquals(List.of(id), f.getDataSourceIdsList());
      assertEquals(periodic, f.getFlags());
    }
    c.disableTracing().get(SEC, TimeUnit.SECONDS);
    session.disabled().get(SEC, TimeUnit.SECONDS);
  }

  @Test
  @SuppressWarnings("deprecation") // compression_type: the older way a config asks for deflate
  void deflateCompressionGivesCompressedPacketsThatInflateToTheTrace() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(ring(256).toBuilder()
        .setCompressionType(TraceConfig.CompressionType.COMPRESSION_TYPE_DEFLATE).build());
    SmbWriter w = p.startedWriter(1);
    write(p, w, 1, 0, 40);
    List<TracePacket> packets = stopAndRead(c, session);
    assertTrue(packets.stream().allMatch(TracePacket::hasCompressedPackets), "every packet is compressed");
    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
    for (TracePacket packet : packets) {
      java.util.zip.Inflater inf = new java.util.zip.Inflater();
      inf.setInput(packet.getCompressedPackets().toByteArray());
      byte[] buf = new byte[1 << 16];
      while (!inf.finished()) {
        int n = inf.inflate(buf);
        assertTrue(n > 0 || inf.finished(), "truncated deflate stream");
        all.write(buf, 0, n);
      }
      inf.end();
    }
    Trace inner = Trace.parseFrom(all.toByteArray());
    assertEquals(range(40), seqs(inner.getPacketList(), 1));
    assertTrue(inner.getPacketList().stream().anyMatch(TracePacket::hasTraceConfig));
  }
}
