package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FakeTraced;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The jperfetto command driven in-process against a fake traced over a real socket. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class JperfettoIT {
  @TempDir Path dir;
  FakeTraced fake;
  String socket;
  final ByteArrayOutputStream out = new ByteArrayOutputStream();
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void start() throws IOException {
    fake = FakeTraced.startIn(dir);
    socket = fake.address();
  }

  @AfterEach
  void stop() {
    fake.close();
  }

  int run(String... args) {
    return run(new byte[0], args);
  }

  int run(byte[] stdin, String... args) {
    out.reset();
    err.reset();
    CliContext ctx = new CliContext(new ByteArrayInputStream(stdin), new PrintStream(out, true),
        new PrintStream(err, true), Map.of("PERFETTO_CONSUMER_SOCK_NAME", socket), false);
    return Jperfetto.run(args, ctx);
  }

  String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  void assertTraceHasFakePackets(byte[] bytes) throws IOException {
    Trace trace = Trace.parseFrom(bytes);
    assertEquals(fake.packets().size(), trace.getPacketCount());
    for (int i = 0; i < trace.getPacketCount(); i++) {
      assertArrayEquals(fake.packets().get(i), trace.getPacket(i).toByteArray());
    }
  }

  @Test
  @SuppressWarnings("deprecation") // trace_uuid_msb/lsb: what upstream perfetto still sends
  void lightOptionsMakeUpstreamsConfigWithTrackEventCategories() throws IOException {
    Path file = dir.resolve("t.pftrace");
    assertEquals(0, run("-t", "200ms", "-b", "4mb", "-o", file.toString(), "app", "gc", "sched/sched_switch"), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
    assertTrue(err().contains("Wrote " + Files.size(file) + " bytes into " + file), err());
    // What the user asked for and nobody offers is named; the extras the CLI adds itself are not.
    assertTrue(err().contains("offers data source \"linux.ftrace\""), err());
    assertFalse(err().contains("linux.system_info") || err().contains("linux.process_stats")
        || err().contains("jvm.jfr"), err());
    TraceConfig config = fake.lastConfig();
    assertEquals(200, config.getDurationMs());
    assertEquals(4096, config.getBuffers(0).getSizeKb());
    assertEquals(30_000, config.getFlushPeriodMs());
    assertEquals(org.jperfetto.service.ClearPeriod.DEFAULT_MS, config.getIncrementalStateConfig().getClearPeriodMs(),
        "a ring that wraps stays readable");
    assertFalse(config.getWriteIntoFile());
    assertFalse(err().contains("warning"), err());
    assertTrue(config.getTraceUuidMsb() != 0 || config.getTraceUuidLsb() != 0);
    List<String> names = config.getDataSourcesList().stream().map(d -> d.getConfig().getName()).toList();
    // Every JVM that offers its JFR events (the agent, JfrDataSource) gives them too.
    assertEquals(List.of("track_event", "linux.ftrace", "linux.process_stats", "linux.system_info", "jvm.jfr"),
        names);
    DataSourceConfig trackEvent = config.getDataSources(0).getConfig();
    assertEquals(List.of("app", "gc"), trackEvent.getTrackEventConfig().getEnabledCategoriesList());
    assertEquals(List.of("*"), trackEvent.getTrackEventConfig().getDisabledCategoriesList());
    assertEquals(List.of("sched/sched_switch"),
        config.getDataSources(1).getConfig().getFtraceConfig().getFtraceEventsList());
  }

  @Test
  void defaultsAreTenSecondsAnd32Mb() throws Exception {
    CliOptions o = CliOptions.parse(new String[] {"app"});
    TraceConfig config = CommandLineConfig.fromOptions(o);
    assertEquals(10_000, config.getDurationMs());
    assertEquals(32 * 1024, config.getBuffers(0).getSizeKb());
    // One default for the command line, the library and the help text.
    assertEquals(org.jperfetto.tracing.TraceConfigs.DEFAULT_BUFFER_KB, config.getBuffers(0).getSizeKb());
    java.io.ByteArrayOutputStream help = new java.io.ByteArrayOutputStream();
    Usage.print(new java.io.PrintStream(help, true, java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(help.toString(java.nio.charset.StandardCharsets.UTF_8).contains("Ring buffer size (default 32mb)"));
    assertEquals(60 * 60 * 1000, CommandLineConfig.timeMs("1h"));
    assertEquals(1, CommandLineConfig.sizeKb("1k"));
    assertEquals(2 * 1024 * 1024, CommandLineConfig.sizeKb("2gb"));
  }

  @Test
  void dataSourcesNoProducerOffersAreNamedWithAGuess() throws IOException {
    Path cfg = dir.resolve("typo.pbtxt");
    Files.writeString(cfg, """
        duration_ms: 200
        buffers { size_kb: 1024 }
        data_sources { config { name: "track_events" } }
        data_sources { config { name: "track_event" } }
        """);
    Path file = dir.resolve("typo.pftrace");
    assertEquals(0, run("-c", cfg.toString(), "--txt", "-o", file.toString()), err());
    String warning = "Warning: no producer connected to the service offers data source \"track_events\" (yet): "
        + "the trace holds none of its data unless one registers it. Did you mean \"track_event\"? "
        + "Offered now: track_event";
    assertTrue(err().contains(warning), err());
    assertEquals(1, err().split("Warning: no producer").length - 1, "one warning only: " + err());
  }

  @Test
  void openNeedsATraceFile() {
    assertEquals(1, run("-t", "100ms", "-o", "-", "--open"));
    assertTrue(err().contains("--open needs a trace file: -o FILE (not stdout, not --detach)"), err());
    assertEquals(List.of(), fake.methodsCalled(), "nothing reaches the service");
  }

  @Test
  void badDurationIsRejected() {
    assertEquals(1, run("-t", "10x", "-o", dir.resolve("x").toString()));
    assertTrue(err().contains("--time argument is invalid: 10x"), err());
    assertEquals(1, run("-t", "10", "-o", dir.resolve("x").toString()));
    assertTrue(err().contains("--time argument is invalid: 10 (expected a whole number and a unit (ms, s, m, h), "
        + "e.g. 500ms, 10s, 5m, 1h)"), err());
    assertEquals(1, run("-b", "64", "-o", dir.resolve("x").toString()));
    assertTrue(err().contains("--buffer argument is invalid: 64 (expected a whole number and a unit (kb, mb, gb, "
        + "k, m, g), e.g. 512kb, 64mb, 1gb)"), err());
  }

  @Test
  void binaryConfigFileAndStdin() throws IOException {
    TraceConfig config = TraceConfig.newBuilder().setDurationMs(100)
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(64)).build();
    Path cfg = Files.write(dir.resolve("cfg.pb"), config.toByteArray());
    Path file = dir.resolve("a.pftrace");
    assertEquals(0, run("-c", cfg.toString(), "-o", file.toString()), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
    assertEquals(100, fake.lastConfig().getDurationMs());
    assertEquals(0, run(config.toByteArray(), "--config=-", "--out", file.toString()), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
  }

  @Test
  void textConfigErrorReportsLineAndColumn() throws IOException {
    Path cfg = Files.writeString(dir.resolve("cfg.pbtxt"),
        "duration_ms: 100\nbuffers {\n  size_kb: 1024\n  bogus: 3\n}\n");
    assertEquals(1, run("-c", cfg.toString(), "--txt", "-o", dir.resolve("x").toString()));
    assertTrue(err().contains(cfg + ":4:3: error: "), err());
    assertTrue(err().contains("bogus"), err());
    assertEquals(List.of(), fake.methodsCalled(), "nothing reaches the service");
  }

  @Test
  void textConfigParsesAndLossyIgnoresUnknownFields() throws IOException {
    Path cfg = Files.writeString(dir.resolve("ok.pbtxt"),
        "duration_ms: 100\nbuffers { size_kb: 64 }\ndata_sources { config { name: \"track_event\" } }\n");
    Path file = dir.resolve("b.pftrace");
    assertEquals(0, run("-c", cfg.toString(), "--txt", "-o", file.toString()), err());
    assertEquals("track_event", fake.lastConfig().getDataSources(0).getConfig().getName());
    Path future = Files.writeString(dir.resolve("future.pbtxt"), "duration_ms: 100\nnew_field_2030: 1\n");
    assertEquals(0, run("-c", future.toString(), "--txt-lossy", "-o", file.toString()), err());
  }

  @Test
  void textConfigWithoutTxtGetsAHint() throws IOException {
    Path cfg = Files.writeString(dir.resolve("t.pbtxt"), "duration_ms: 100\nbuffers { size_kb: 64 }\n");
    assertEquals(1, run("-c", cfg.toString(), "-o", dir.resolve("x").toString()));
    assertTrue(err().contains("Try adding --txt"), err());
  }

  @Test
  void outputToStdout() throws IOException {
    assertEquals(0, run("-t", "100ms", "-o", "-"), err());
    assertTraceHasFakePackets(out.toByteArray());
    assertTrue(err().contains("into stdout"), err());
  }

  @Test
  void sizeMakesTheServiceWriteIntoThePassedFile() throws IOException {
    Path file = dir.resolve("w.pftrace");
    assertEquals(0, run("-t", "100ms", "-s", "1mb", "-o", file.toString()), err());
    assertTrue(err().contains("Trace written into the output file"), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
    TraceConfig config = fake.lastConfig();
    assertTrue(config.getWriteIntoFile());
    assertEquals(1024 * 1024, config.getMaxFileSizeBytes());
    assertFalse(fake.methodsCalled().contains("ReadBuffers"));
  }

  @Test
  void noClobberRefusesAnExistingFile() throws IOException {
    Path file = Files.writeString(dir.resolve("exists"), "keep");
    assertEquals(1, run("-t", "100ms", "--no-clobber", "-o", file.toString()));
    assertTrue(err().contains("already exists"), err());
    assertEquals("keep", Files.readString(file));
  }

  @Test
  void detachIsDetachedAttachStop() throws IOException {
    Path cfg = Files.writeString(dir.resolve("d.pbtxt"), "write_into_file: true\nbuffers { size_kb: 64 }\n");
    Path file = dir.resolve("d.pftrace");
    assertEquals(0, run("--detach=k1", "-c", cfg.toString(), "--txt", "-o", file.toString()), err());
    assertEquals(1, fake.activeSessions(), "the session outlives the detached command");
    assertEquals(0, run("--is_detached=k1"), err());
    assertEquals(2, run("--is_detached=nope"));
    assertEquals(0, run("--attach=k1", "--stop"), err());
    assertTrue(err().contains("Trace written into the output file"), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
    assertEquals(2, run("--attach=k1"));
    assertTrue(err().contains("Session re-attach failed"), err());
  }

  @Test
  void detachNeedsWriteIntoFile() {
    assertEquals(1, run("--detach=k", "-t", "1s", "-o", dir.resolve("x").toString()));
    assertTrue(err().contains("write_into_file must be true"), err());
  }

  @Test
  void queryPrintsATableAndQueryRawTheProto() throws IOException {
    assertEquals(0, run("--query"), err());
    String table = out.toString(StandardCharsets.UTF_8);
    assertTrue(table.contains("Service: fake-traced 1.0"), table);
    assertTrue(table.contains("PRODUCER PROCESSES CONNECTED"), table);
    assertTrue(table.matches("(?s).*\\n1\\s+4242\\s+1000\\s+demo_app\\s+jperfetto-test\\n.*"), table);
    assertTrue(table.matches("(?s).*\\ntrack_event\\s+demo_app \\(1\\)\\s+app,gc\\n.*"), table);
    assertTrue(table.matches(
        "(?s).*\\n7\\s+1000\\s+STARTED\\s+\\(1\\) 4096\\s+10\\s+1\\s+\\d\\d:\\d\\d:\\d\\d fake_session\\n.*"), table);
    assertEquals(0, run("--query-raw"), err());
    TracingServiceState state = TracingServiceState.parseFrom(out.toByteArray());
    assertEquals("demo_app", state.getProducers(0).getName());
    assertEquals(7, state.getTracingSessions(0).getId());
  }

  @Test
  void serviceErrorIsReportedAndTheEmptyFileRemoved() {
    fake.setEnableError("Too many concurrent tracing sesions");
    Path file = dir.resolve("e.pftrace");
    // upstream's perfetto exits 0 here; a refused session is a failure for jperfetto (issue 14)
    assertEquals(1, run("-t", "1s", "-o", file.toString()), err());
    assertTrue(err().contains("Service error: Too many concurrent tracing sesions"), err());
    assertFalse(Files.exists(file));
  }

  @Test
  void usageErrorsExitOne() {
    assertEquals(1, run());
    assertEquals(1, run("--help"));
    assertTrue(err().contains("Usage: jperfetto"), err());
    assertEquals(1, run("--stop"));
    assertTrue(err().contains("--stop is supported only in combination with --attach"), err());
    assertEquals(1, run("--bogus"));
    assertEquals(1, run("--query", "--attach=x"));
    assertEquals(1, run("-t", "1s"));
    assertTrue(err().contains("Either --out"), err());
    assertEquals(0, run("--version"));
  }

  @Test
  void systemInsistsOnAnExternalService() {
    fake.close();
    assertEquals(1, run("--system", "--query"));
    assertTrue(err().contains("Could not connect to the tracing service socket " + socket), err());
  }

  @Test
  void withoutAServiceTheEmbeddedOneIsStartedAndAnnounced() throws IOException {
    fake.close();
    Files.deleteIfExists(Path.of(socket));
    String embeddedSocket = dir.resolve("embedded.sock").toString();
    FakeTraced[] started = {null};
    EmbeddedService.Factory factory = s -> {
      started[0] = FakeTraced.start(embeddedSocket);
      return new EmbeddedService() {
        public String consumerSocket() {
          return embeddedSocket;
        }

        public String producerSocket() {
          return "/nowhere/producer";
        }

        public void close() {
          started[0].close();
        }
      };
    };
    Plugins.register(EmbeddedService.Factory.class, factory);
    try {
      Path file = dir.resolve("emb.pftrace");
      assertEquals(0, run("-t", "100ms", "-o", file.toString()), err());
      assertTrue(err().contains("started an in-process jtraced"), err());
      assertTrue(started[0] != null && started[0].methodsCalled().contains("EnableTracing"));
    } finally {
      Plugins.unregister(EmbeddedService.Factory.class, factory);
    }
    assertEquals(1, run("-t", "100ms", "-o", dir.resolve("none").toString()));
    assertTrue(err().contains("no in-process service built in"), err());
  }

  @Test
  void cloneOnAServiceWithoutCloneSessionSaysSo() throws IOException {
    fake.close();
    Files.deleteIfExists(Path.of(socket));
    fake = FakeTraced.startWithout(socket, Set.of("CloneSession"));
    assertEquals(1, run("--clone", "7", "-o", dir.resolve("c").toString()));
    assertTrue(err().contains("does not support"), err());
  }

  @Test
  void aSessionPastJtracedsBufferBudgetIsRefusedWithTheReasonAndExitOne() throws IOException {
    Path consumer = dir.resolve("budget-consumer.sock");
    try (org.jperfetto.service.ipc.ServiceHost jtraced = org.jperfetto.service.ipc.ServiceHost.start(
        org.jperfetto.service.ipc.ServiceHost.Options.of(dir.resolve("budget-producer.sock").toString(),
            consumer.toString()).withMaxBufferBytes(1 << 20))) {
      socket = jtraced.consumerSocket();
      Path file = dir.resolve("budget.pftrace");
      assertEquals(1, run("-t", "100ms", "-b", "4mb", "-o", file.toString()), err());
      assertTrue(err().contains("Service error: Trace buffers of 4096 KB exceed the service's buffer"
          + " memory budget: 0 KB of 1024 KB are in use"), err());
      assertFalse(Files.exists(file));
      assertEquals(0, run("-t", "100ms", "-b", "1mb", "-o", file.toString()), err());
    }
  }

  @Test
  void anOutputFileThatCannotBeWrittenExitsOneNamingIt() {
    assertEquals(1, run("-t", "100ms", "-o", "/dev/full"), err());
    assertTrue(err().contains("Failed to write the trace into /dev/full: No space left on device"), err());
    assertFalse(err().contains("Wrote "), err());
    assertTrue(Files.exists(Path.of("/dev/full")) && !Files.isRegularFile(Path.of("/dev/full")),
        "an empty output that is not a regular file is never removed");
  }

  @Test
  void aWriteIntoFileSessionWhoseFileFailsExitsOne() throws IOException {
    try (org.jperfetto.service.ipc.ServiceHost jtraced = org.jperfetto.service.ipc.ServiceHost.start(
        org.jperfetto.service.ipc.ServiceHost.Options.of(dir.resolve("wif-producer.sock").toString(),
            dir.resolve("wif-consumer.sock").toString()))) {
      socket = jtraced.consumerSocket();
      Path cfg = dir.resolve("wif.pbtxt");
      Files.writeString(cfg, "buffers { size_kb: 1024 }\nduration_ms: 100\nwrite_into_file: true\n"
          + "data_sources { config { name: \"track_event\" } }\n");
      assertEquals(1, run("--txt", "-c", cfg.toString(), "-o", "/dev/full"), err());
      assertTrue(err().contains("Service error: writing the trace file /dev/full failed"), err());
    }
  }

  @Test
  void aRefusedCloneExitsNonZero() {
    Path file = dir.resolve("refused.pftrace");
    assertEquals(1, run("--clone", "8", "-o", file.toString()), err());
    assertTrue(err().contains("Service error: Failed to clone tracing session 8: no session 8"), err());
    assertFalse(Files.exists(file));
  }

  @Test
  void cloneReadsTheClonedSessionBack() throws IOException {
    Path file = dir.resolve("c.pftrace");
    assertEquals(0, run("--clone", "7", "-o", file.toString()), err());
    assertTraceHasFakePackets(Files.readAllBytes(file));
  }

  @Test
  void subcommandHookRunsByName() {
    Subcommand demo = new Subcommand() {
      public String name() {
        return "demo";
      }

      public String summary() {
        return "test demo";
      }

      public int run(String[] args, CliContext context) {
        context.out().print(String.join("|", args));
        return 3;
      }
    };
    Plugins.register(Subcommand.class, demo);
    try {
      assertEquals(3, run("demo", "--producer", "-t", "1s"));
      assertEquals("--producer|-t|1s", out.toString(StandardCharsets.UTF_8));
      run("--help");
      assertTrue(err().contains("demo"), err());
    } finally {
      Plugins.unregister(Subcommand.class, demo);
    }
  }

  @Test
  void enableRequestCarriesTheConfigAndNoFdForIpcReadback() throws IOException {
    assertEquals(0, run("-t", "100ms", "-o", dir.resolve("r").toString()), err());
    EnableTracingRequest first = EnableTracingRequest.parseFrom(fake.calls().get(0).args());
    assertFalse(first.getAttachNotificationOnly());
    // QueryServiceState: which of the config's data sources no producer offers (a warning each).
    assertEquals(List.of("EnableTracing", "QueryServiceState", "ReadBuffers"), fake.methodsCalled());
  }
}
