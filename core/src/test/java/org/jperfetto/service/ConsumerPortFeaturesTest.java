package org.jperfetto.service;

import static org.jperfetto.service.TracingServiceTest.config;
import static org.jperfetto.service.TracingServiceTest.packet;
import static org.jperfetto.service.TracingServiceTest.testPackets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.zip.Inflater;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 6 through the Java endpoints: the rest of the consumer port and the session features. */
@Timeout(30)
class ConsumerPortFeaturesTest {
  static final int SERVICE_UID = TracingServiceTest.SERVICE_UID;
  static final TraceConfig.BufferConfig.FillPolicy RING = TraceConfig.BufferConfig.FillPolicy.RING_BUFFER;
  final ManualTaskRunner runner = new ManualTaskRunner();
  final TracingService service = TracingServiceTest.newService(runner);

  TestProducer producer(String name, int uid) {
    return new TestProducer().connect(service, name, uid, 10).register("test");
  }

  static void write(TestProducer p, int from, int count) {
    TestTraceWriter w = p.writers.isEmpty() ? p.writer(1, PageLayout.DIV4) : p.writers.get(0);
    for (int i = from; i < from + count; i++) {
      assertTrue(w.write(packet("p", i, 20)));
    }
    p.commitAll(0);
  }

  /** A trace file in memory. */
  static ConsumerEndpoint.TraceFileSink fileSink(ByteArrayOutputStream file) {
    return data -> {
      byte[] b = new byte[data.remaining()];
      data.get(b);
      file.writeBytes(b);
    };
  }

  static List<Integer> values(Trace t) {
    return testPackets(t).stream().map(p -> p.getForTesting().getSeqValue()).toList();
  }

  static TraceConfig withTriggers(TraceConfig base, TraceConfig.TriggerConfig.TriggerMode mode,
      int timeoutMs, TraceConfig.TriggerConfig.Trigger... triggers) {
    return base.toBuilder().setTriggerConfig(TraceConfig.TriggerConfig.newBuilder().setTriggerMode(mode)
        .setTriggerTimeoutMs(timeoutMs).addAllTriggers(List.of(triggers))).build();
  }

  static TraceConfig.TriggerConfig.Trigger trigger(String name, String regex, int stopDelayMs) {
    return TraceConfig.TriggerConfig.Trigger.newBuilder().setName(name).setProducerNameRegex(regex)
        .setStopDelayMs(stopDelayMs).build();
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void deferredStartWaitsForStartTracing() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(64, RING, "test").toBuilder().setDeferredStart(true).build()));
    assertEquals(1, p.setups.size());
    assertEquals(0, p.starts.size(), "deferred: set up, not started");
    c.endpoint.startTracing();
    assertEquals(1, p.starts.size());
    write(p, 0, 10);
    c.endpoint.disableTracing();
    assertEquals(10, values(c.readTrace()).size());
  }

  @Test
  void changeTraceConfigAllowsOnlyProducerFiltersAndStartsNewlyMatchedProducers() {
    TestProducer a = producer("app_a", 1001);
    TestProducer b = producer("app_b", 1002);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    TraceConfig cfg = config(64, RING, "test");
    TraceConfig onlyA = cfg.toBuilder().setDataSources(0, cfg.getDataSources(0).toBuilder()
        .addProducerNameFilter("app_a")).build();
    assertEquals("", c.enable(onlyA));
    assertEquals(1, a.starts.size());
    assertEquals(0, b.starts.size());
    String refused = c.endpoint.changeTraceConfig(onlyA.toBuilder().setDurationMs(5).build());
    assertTrue(refused.contains("producer_name_filter"), refused);
    assertEquals(0, b.starts.size());
    TraceConfig both = cfg.toBuilder().setDataSources(0, cfg.getDataSources(0).toBuilder()
        .addProducerNameRegexFilter("app_.*")).build();
    assertEquals("", c.endpoint.changeTraceConfig(both));
    assertEquals(1, a.starts.size(), "an already running instance is left alone");
    assertEquals(1, b.starts.size(), "the newly matched producer starts");
  }

  /** Widening a producer filter starts every registration of the name on the newly matched producer. */
  @Test
  void changeTraceConfigStartsEveryRegistrationOfANewlyMatchedProducer() {
    TestProducer a = producer("app_a", 1001);
    TestProducer b = producer("app_b", 1002).register("test");
    TestConsumer c = new TestConsumer().connect(service, 1000);
    TraceConfig cfg = config(64, RING, "test");
    assertEquals("", c.enable(cfg.toBuilder().setDataSources(0, cfg.getDataSources(0).toBuilder()
        .addProducerNameFilter("app_a")).build()));
    assertEquals(0, b.starts.size());
    assertEquals("", c.endpoint.changeTraceConfig(cfg.toBuilder().setDataSources(0, cfg.getDataSources(0)
        .toBuilder().addProducerNameRegexFilter("app_.*")).build()));
    assertEquals(1, a.starts.size());
    assertEquals(2, b.starts.size(), "both of app_b's registrations start");
  }

  @Test
  void detachedSessionOutlivesItsConsumerAndAttachGivesTheConfigBack() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    TraceConfig cfg = config(64, RING, "test");
    assertEquals("", c.enable(cfg));
    assertEquals("", c.endpoint.detach("key1"));
    c.endpoint.disconnect();
    assertEquals(1, service.sessionCount(), "the detached session keeps running");
    assertTrue(p.stops.isEmpty());
    write(p, 0, 5);

    TestConsumer other = new TestConsumer().connect(service, 999);
    assertTrue(other.endpoint.attach("key1").isEmpty(), "another uid cannot attach");
    TestConsumer again = new TestConsumer().connect(service, 1000);
    assertTrue(again.endpoint.attach("wrong").isEmpty());
    assertEquals(Optional.of(cfg), again.endpoint.attach("key1"));
    assertTrue(again.endpoint.attach("key1").isEmpty(), "attached already");
    again.endpoint.disableTracing();
    assertEquals(List.of(""), again.disabled);
    assertEquals(List.of(0, 1, 2, 3, 4), values(again.readTrace()));
  }

  @Test
  void traceStatsCountBuffersProducersAndSessions() {
    TestProducer p = producer("app", 1001);
    producer("idle", 1002);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(64, RING, "test")));
    write(p, 0, 50);
    TraceStats st = c.endpoint.traceStats();
    assertEquals(2, st.getProducersConnected());
    assertEquals(1, st.getTracingSessions());
    assertEquals(1, st.getBufferStatsCount());
    assertTrue(st.getBufferStats(0).getChunksWritten() > 0);
    assertTrue(st.getBufferStats(0).getBytesWritten() > 50 * 20);
    assertEquals(0, st.getBufferStats(0).getBytesRead());
    assertEquals(0, st.getBufferStats(0).getAbiViolations());
  }

  @Test
  void observeEventsReportsInstanceStatesAndAllStarted() {
    TestProducer p = new TestProducer().connect(service, "app", 1001, 10);
    p.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("test")
        .setWillNotifyOnStart(true).build());
    TestConsumer c = new TestConsumer().connect(service, 1000);
    c.endpoint.observeEvents((1 << ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES_VALUE)
        | (1 << ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED_VALUE));
    assertEquals("", c.enable(config(64, RING, "test")));
    assertTrue(c.events.isEmpty(), "starting, not started");
    p.endpoint.notifyDataSourceStarted(p.setups.get(0));
    assertEquals(2, c.events.size(), c.events.toString());
    ObservableEvents.DataSourceInstanceStateChange change = c.events.get(0).getInstanceStateChanges(0);
    assertEquals("app", change.getProducerName());
    assertEquals("test", change.getDataSourceName());
    assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED, change.getState());
    assertTrue(c.events.get(1).getAllDataSourcesStarted());
    c.endpoint.disableTracing();
    assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED,
        c.events.get(2).getInstanceStateChanges(0).getState());
  }

  @Test
  void queryServiceStateShowsProducersDataSourcesAndOwnSessions() {
    producer("app", 1001);
    TestConsumer mine = new TestConsumer().connect(service, 1000);
    TestConsumer theirs = new TestConsumer().connect(service, 2000);
    assertEquals("", mine.enable(config(64, RING, "test").toBuilder().setUniqueSessionName("mine").build()));
    assertEquals("", theirs.enable(config(128, RING, "test")));
    TracingServiceState st = mine.endpoint.queryServiceState(false);
    assertEquals(1, st.getProducersCount());
    assertEquals("app", st.getProducers(0).getName());
    assertEquals(1001, st.getProducers(0).getUid());
    assertEquals(1, st.getDataSourcesCount());
    assertEquals("test", st.getDataSources(0).getDsDescriptor().getName());
    assertEquals(st.getProducers(0).getId(), st.getDataSources(0).getProducerId());
    assertEquals(2, st.getNumSessions());
    assertEquals(2, st.getNumSessionsStarted());
    assertEquals(1, st.getTracingSessionsCount(), "only the caller's own session in detail");
    assertEquals("mine", st.getTracingSessions(0).getUniqueSessionName());
    assertEquals(List.of(64), st.getTracingSessions(0).getBufferSizeKbList());
    assertTrue(st.getTracingSessions(0).getIsStarted());
    TracingServiceState sessionsOnly = mine.endpoint.queryServiceState(true);
    assertEquals(0, sessionsOnly.getProducersCount());
    assertEquals(0, sessionsOnly.getDataSourcesCount());
    TestConsumer root = new TestConsumer().connect(service, 0);
    assertEquals(2, root.endpoint.queryServiceState(true).getTracingSessionsCount());
  }

  @Test
  void capabilitiesAndBugreport() {
    TestConsumer c = new TestConsumer().connect(service, 1000);
    var caps = c.endpoint.queryCapabilities();
    assertTrue(caps.getHasQueryCapabilities());
    assertTrue(caps.getHasCloneSession());
    assertFalse(caps.getHasTraceConfigOutputPath());
    assertTrue(caps.getObservableEventsList().contains(ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT));
    var br = c.endpoint.saveTraceForBugreport();
    assertFalse(br.getSuccess());
    assertTrue(br.getMsg().contains("not supported"), br.getMsg());
  }

  @Test
  void cloneSessionSnapshotsTheBuffersAndTheOriginalKeepsRunning() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer owner = new TestConsumer().connect(service, 1000);
    assertEquals("", owner.enable(config(64, RING, "test").toBuilder().setUniqueSessionName("s1").build()));
    write(p, 0, 20);
    TestConsumer cloner = new TestConsumer().connect(service, 1000);
    cloner.endpoint.cloneSession(0, "s1");
    assertEquals(List.of(""), cloner.clones);
    assertEquals(2, service.sessionCount());
    assertEquals(20, values(cloner.readTrace()).size());
    cloner.endpoint.freeBuffers();

    write(p, 20, 5);
    TestConsumer byId = new TestConsumer().connect(service, 1000);
    long id = byId.endpoint.queryServiceState(true).getTracingSessions(0).getId();
    byId.endpoint.cloneSession(id, "");
    assertEquals(List.of(""), byId.clones);
    assertEquals(25, values(byId.readTrace()).size());

    TestConsumer stranger = new TestConsumer().connect(service, 3000);
    stranger.endpoint.cloneSession(id, "");
    stranger.endpoint.cloneSession(0, "nope");
    assertEquals(List.of("Not allowed to clone a session from another UID", "Tracing session not found"),
        stranger.clones);

    assertTrue(p.stops.isEmpty(), "the original keeps running");
    write(p, 25, 5);
    owner.endpoint.disableTracing();
    assertEquals(30, values(owner.readTrace()).size(), "the clones did not take the original's data");
  }

  @Test
  void startTracingTriggerStartsTheSessionForStopDelay() throws IOException {
    TestProducer p = producer("app", 1001);
    TestProducer other = producer("other", 1002);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 10_000, trigger("go", "app", 500))));
    assertEquals(0, p.starts.size());
    other.endpoint.activateTriggers(List.of("go"));
    assertEquals(0, p.starts.size(), "producer_name_regex does not match \"other\"");
    p.endpoint.activateTriggers(List.of("nothing", "go"));
    assertEquals(1, p.starts.size());
    write(p, 0, 3);
    runner.advance(499);
    assertTrue(c.disabled.isEmpty());
    runner.advance(2);
    assertEquals(List.of(""), c.disabled, "stop_delay_ms became the duration");
    Trace t = c.readTrace();
    assertEquals(3, values(t).size());
    TracePacket trig = t.getPacketList().stream().filter(TracePacket::hasTrigger).findFirst().orElseThrow();
    assertEquals("go", trig.getTrigger().getTriggerName());
    assertEquals("app", trig.getTrigger().getProducerName());
    assertEquals(1001, trig.getTrigger().getTrustedProducerUid());
  }

  @Test
  void startTracingTriggerTimeoutEndsTheSession() {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 1000, trigger("go", "", 0))));
    runner.advance(1001);
    assertEquals(List.of(""), c.disabled);
    p.endpoint.activateTriggers(List.of("go"));
    assertEquals(0, p.starts.size());
  }

  @Test
  void stopTracingTriggerStopsAfterDelayAndWithoutTriggerNothingIsHandedOut() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 60_000, trigger("stop", "", 200))));
    write(p, 0, 4);
    assertEquals(0, values(c.readTrace()).size(), "waiting for the trigger");
    p.endpoint.activateTriggers(List.of("stop"));
    runner.advance(199);
    assertTrue(c.disabled.isEmpty());
    runner.advance(2);
    assertEquals(List.of(""), c.disabled);
    assertEquals(4, values(c.readTrace()).size());

    TestConsumer c2 = new TestConsumer().connect(service, 1000);
    assertEquals("", c2.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 1000, trigger("stop", "", 0))));
    runner.advance(1001);
    assertEquals(List.of(""), c2.disabled, "trigger_timeout_ms ends it");
    assertEquals(0, values(c2.readTrace()).size());
  }

  @Test
  void cloneSnapshotTriggerTellsTheConsumer() {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    c.endpoint.observeEvents(1 << ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT_VALUE);
    assertEquals("", c.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.CLONE_SNAPSHOT, 60_000, trigger("snap", "", 50))));
    p.endpoint.activateTriggers(List.of("snap"));
    assertTrue(c.events.isEmpty());
    runner.advance(51);
    assertEquals(1, c.events.size());
    ObservableEvents.CloneTriggerHit hit = c.events.get(0).getCloneTriggerHit();
    assertEquals("snap", hit.getTriggerName());
    assertEquals("app", hit.getProducerName());
    assertEquals(50, hit.getTriggerDelayMs());
    assertTrue(p.stops.isEmpty(), "the session keeps running");
  }

  @Test
  void badConfigsAreRefusedAndChangeNothing() {
    TestProducer p = producer("app", 1001);
    TestConsumer running = new TestConsumer().connect(service, 1000);
    assertEquals("", running.enable(config(64, RING, "test").toBuilder().setUniqueSessionName("u").build()));
    TraceConfig ok = config(64, RING, "test");
    TraceConfig.DataSource ds = ok.getDataSources(0);
    List<TraceConfig> bad = List.of(
        ok.toBuilder().setBuffers(0, ok.getBuffers(0).toBuilder().setSizeKb(0)).build(),
        ok.toBuilder().setDataSources(0, ds.toBuilder().setConfig(ds.getConfig().toBuilder().setTargetBuffer(1)))
            .build(),
        ok.toBuilder().setUniqueSessionName("u").build(),
        withTriggers(ok, TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 1000, trigger("t", "", 0))
            .toBuilder().setWriteIntoFile(true).build(),
        withTriggers(ok, TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 1000, trigger("t", "", 0),
            trigger("t", "", 1)),
        withTriggers(ok, TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 0, trigger("t", "", 0)),
        withTriggers(ok, TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 10, trigger("t", "", 0))
            .toBuilder().setDurationMs(10).build(),
        ok.toBuilder().setWriteIntoFile(true).build());
    List<String> expected = List.of("positive multiple of 4", "out of bounds target_buffer",
        "unique session name (u) already exists", "STOP_TRACING/CLONE_SNAPSHOT and write_into_file",
        "Duplicate trigger name: t", "positive trigger_timeout_ms", "duration_ms was set",
        "a FD needs to be passed");
    for (int i = 0; i < bad.size(); i++) {
      TestConsumer c = new TestConsumer().connect(service, 1000);
      String err = c.enable(bad.get(i));
      assertTrue(err.contains(expected.get(i)), i + ": " + err);
      assertEquals(List.of(err), c.disabled);
      assertEquals(1, service.sessionCount(), "nothing created: " + i);
      assertEquals(1, p.setups.size(), "no data source set up: " + i);
    }
    TestConsumer c = new TestConsumer().connect(service, 1000);
    String err = c.endpoint.enableTracing(ok, Optional.of(data -> { }));
    assertTrue(err.contains("does not set write_into_file"), err);
    TraceConfig.Builder many = ok.toBuilder();
    for (int i = 0; i < 128; i++) {
      many.addBuffers(ok.getBuffers(0));
    }
    err = c.enable(many.build());
    assertTrue(err.contains("Too many buffers configured (129)"), err);
    assertEquals(1, service.sessionCount());
  }

  @Test
  void sessionLimitsPerUidAndOverall() {
    for (int i = 1; i < ServiceLimits.MAX_SESSIONS_PER_UID; i++) {
      assertEquals("", new TestConsumer().connect(service, 1000).enable(config(4, RING)));
    }
    assertEquals("", new TestConsumer().connect(service, 1000).enable(config(4, RING)));
    String err = new TestConsumer().connect(service, 1000).enable(config(4, RING));
    assertTrue(err.contains("for uid 1000 limit is 5"), err);
    for (int uid = 2000; service.sessionCount() < ServiceLimits.MAX_SESSIONS; uid++) {
      assertEquals("", new TestConsumer().connect(service, uid).enable(config(4, RING)));
    }
    err = new TestConsumer().connect(service, 9999).enable(config(4, RING));
    assertTrue(err.contains("Too many concurrent tracing sessions (15)"), err);
  }

  @Test
  void lockdownRefusesProducersOfOtherUidsUntilCleared() {
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(4, RING).toBuilder()
        .setLockdownMode(TraceConfig.LockdownModeOperation.LOCKDOWN_SET).build()));
    TestProducer stranger = new TestProducer().connect(service, "x", 1001, 1);
    assertEquals(1, stranger.kicked.size());
    assertTrue(stranger.kicked.get(0).contains("lockdown"), stranger.kicked.get(0));
    assertEquals(0, service.producerCount());
    new TestProducer().connect(service, "own", SERVICE_UID, 1);
    assertEquals(1, service.producerCount(), "the service's own uid is let in");
    c.endpoint.freeBuffers();
    assertEquals("", c.enable(config(4, RING).toBuilder()
        .setLockdownMode(TraceConfig.LockdownModeOperation.LOCKDOWN_CLEAR).build()));
    TestProducer later = new TestProducer().connect(service, "y", 1001, 1);
    assertTrue(later.kicked.isEmpty());
    assertEquals(2, service.producerCount());
  }

  @Test
  void builtinDataSourceSwitchesLeaveOutServicePackets() throws IOException {
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(4, RING).toBuilder().setBuiltinDataSources(
        TraceConfig.BuiltinDataSource.newBuilder().setDisableTraceConfig(true).setDisableSystemInfo(true)
            .setDisableClockSnapshotting(true).setDisableServiceEvents(true)).build()));
    c.endpoint.disableTracing();
    Trace t = c.readTrace();
    assertFalse(t.getPacketList().stream().anyMatch(p -> p.hasTraceConfig() || p.hasSystemInfo()
        || p.hasClockSnapshot() || p.hasServiceEvent()), t.toString());
    assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceUuid));
  }

  @Test
  void periodicFlushesAndIncrementalStateClears() {
    TestProducer p = new TestProducer().connect(service, "app", 1001, 10);
    p.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("test")
        .setHandlesIncrementalStateClear(true).build());
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(4, RING, "test").toBuilder().setFlushPeriodMs(1000)
        .setIncrementalStateConfig(TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(300)).build()));
    runner.advance(3100);
    assertEquals(3, p.flushes.size());
    assertEquals(10, p.clears.size());
    assertEquals(p.setups.get(0), p.clears.get(0)[0]);
    c.endpoint.disableTracing();
    runner.advance(5000);
    assertEquals(3, p.flushes.size(), "no periodic task after the stop");
    assertEquals(10, p.clears.size());
  }

  /** Clears the service sends in periodMs x 10 (plus a little) to a session of config. */
  private int clearsOf(TraceConfig config, int periodMs) {
    TestProducer p = new TestProducer().connect(service, "app", 1001, 10);
    p.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("test")
        .setHandlesIncrementalStateClear(true).build());
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config));
    runner.advance(10L * periodMs + 50);
    c.endpoint.disableTracing();
    return p.clears.size();
  }

  @Test
  void aRingBufferSessionWithoutAClearPeriodGetsTheServiceDefault() {
    assertEquals(10, clearsOf(config(4, RING, "test"), ClearPeriod.DEFAULT_MS));
    service.defaultClearPeriod(200);
    assertEquals(10, clearsOf(config(4, RING, "test"), 200), "a changed default");
  }

  @Test
  void noDefaultClearsForDiscardBuffersAnExplicitZeroOrAServiceDefaultOfZero() {
    TraceConfig.BufferConfig.FillPolicy discard = TraceConfig.BufferConfig.FillPolicy.DISCARD;
    assertEquals(0, clearsOf(config(4, discard, "test"), ClearPeriod.DEFAULT_MS));
    assertEquals(0, clearsOf(config(4, RING, "test").toBuilder().setIncrementalStateConfig(
        TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(0)).build(), ClearPeriod.DEFAULT_MS));
    service.defaultClearPeriod(0);
    assertEquals(0, clearsOf(config(4, RING, "test"), ClearPeriod.DEFAULT_MS));
  }

  @Test
  @SuppressWarnings("deprecation") // compression_type: the older way a config asks for deflate
  void compressionDeflatesPacketsIntoCompressedPackets() throws Exception {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    assertEquals("", c.enable(config(64, RING, "test").toBuilder()
        .setCompressionType(TraceConfig.CompressionType.COMPRESSION_TYPE_DEFLATE).build()));
    write(p, 0, 40);
    c.endpoint.disableTracing();
    Trace t = c.readTrace();
    assertTrue(t.getPacketList().stream().allMatch(TracePacket::hasCompressedPackets), t.toString());
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (TracePacket packet : t.getPacketList()) {
      Inflater inf = new Inflater();
      inf.setInput(packet.getCompressedPackets().toByteArray());
      byte[] buf = new byte[1 << 16];
      while (!inf.finished()) {
        int n = inf.inflate(buf);
        assertTrue(n > 0 || inf.finished(), "truncated stream");
        all.write(buf, 0, n);
      }
      inf.end();
    }
    Trace inner = Trace.parseFrom(all.toByteArray());
    assertEquals(40, values(inner).size());
    assertTrue(inner.getPacketList().stream().anyMatch(TracePacket::hasTraceConfig));
    assertEquals(1001, testPackets(inner).get(0).getTrustedUid());
  }

  @Test
  void writeIntoFileDrainsPeriodicallyWithoutLossOrRepeatAndOnStop() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    ConsumerEndpoint.TraceFileSink sink = fileSink(file);
    assertEquals("", c.endpoint.enableTracing(config(64, RING, "test").toBuilder().setWriteIntoFile(true)
        .setFileWritePeriodMs(10).build(), Optional.of(sink)));
    write(p, 0, 10);
    runner.advance(99);
    assertEquals(0, file.size(), "the period is at least 100 ms");
    runner.advance(1);
    int first = file.size();
    assertEquals(10, values(Trace.parseFrom(file.toByteArray())).size());
    write(p, 10, 10);
    runner.advance(100);
    assertTrue(file.size() > first);
    write(p, 20, 5);
    c.endpoint.disableTracing();
    assertEquals(List.of(""), c.disabled);
    Trace t = Trace.parseFrom(file.toByteArray());
    assertEquals(java.util.stream.IntStream.range(0, 25).boxed().toList(), values(t));
    assertEquals(1, t.getPacketList().stream().filter(TracePacket::hasTraceConfig).count());
    assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceStats), "the last drain");
    int end = file.size();
    runner.advance(10_000);
    assertEquals(end, file.size(), "nothing after the stop");
  }

  @Test
  void writeIntoFileStopsAtMaxFileSize() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    assertEquals("", c.endpoint.enableTracing(config(64, RING, "test").toBuilder().setWriteIntoFile(true)
        .setMaxFileSizeBytes(3000).build(), Optional.of(fileSink(file))));
    write(p, 0, 200);
    runner.advance(ServiceLimits.DEFAULT_FILE_WRITE_PERIOD_MS);
    assertTrue(file.size() <= 3000 && file.size() > 1000, "size " + file.size());
    assertEquals(List.of(""), c.disabled, "a full file ends the session");
    assertEquals(1, p.stops.size());
    List<Integer> got = values(Trace.parseFrom(file.toByteArray()));
    assertFalse(got.isEmpty());
    assertEquals(java.util.stream.IntStream.range(0, got.size()).boxed().toList(), got);
  }

  @Test
  void writeIntoFileFlushesAsWriteFlushModeAutoDoes() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer c = new TestConsumer().connect(service, 1000);
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    ConsumerEndpoint.TraceFileSink sink = fileSink(file);
    // A long period: every drain is preceded by a flush, so data still in the SMB reaches the file.
    assertEquals("", c.endpoint.enableTracing(config(64, RING, "test").toBuilder().setWriteIntoFile(true)
        .setFileWritePeriodMs(8000).setFlushPeriodMs(100).build(), Optional.of(sink)));
    TestTraceWriter w = p.writer(1, PageLayout.DIV4);
    for (int i = 0; i < 5; i++) {
      assertTrue(w.write(packet("p", i, 20)));
    }
    runner.advance(7999);
    assertEquals(0, p.flushes.size(), "flush_period_ms is ignored in AUTO mode");
    runner.advance(1);
    assertEquals(1, p.flushes.size());
    assertEquals(List.of(0, 1, 2, 3, 4), values(Trace.parseFrom(file.toByteArray())));
    c.endpoint.disableTracing();

    // A short period: a flush every 5 s and the drains on their own.
    TestConsumer c2 = new TestConsumer().connect(service, 1000);
    assertEquals("", c2.endpoint.enableTracing(config(64, RING, "test").toBuilder().setWriteIntoFile(true)
        .setFileWritePeriodMs(1000).build(), Optional.of(data -> { })));
    int before = p.flushes.size();
    runner.advance(4999);
    assertEquals(before, p.flushes.size());
    runner.advance(1);
    assertEquals(before + 1, p.flushes.size());
  }

  @Test
  void cloneOfAStopTracingSessionWaitingForItsTriggerHandsOutTheData() throws IOException {
    TestProducer p = producer("app", 1001);
    TestConsumer owner = new TestConsumer().connect(service, 1000);
    assertEquals("", owner.enable(withTriggers(config(64, RING, "test"),
        TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, 60_000, trigger("stop", "", 0))));
    write(p, 0, 7);
    TestConsumer cloner = new TestConsumer().connect(service, 1000);
    cloner.endpoint.cloneSession(owner.endpoint.queryServiceState(true).getTracingSessions(0).getId(), "");
    assertEquals(List.of(""), cloner.clones);
    assertEquals(7, values(cloner.readTrace()).size());
    assertEquals(0, values(owner.readTrace()).size(), "the original still waits for its trigger");
  }
}
