package org.jperfetto.consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.FlushRequest;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 20, unit = TimeUnit.SECONDS)
class TracingConsumerIT {
  private static final TraceConfig CONFIG = TraceConfig.newBuilder()
      .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
      .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
          org.jperfetto.protos.DataSourceConfig.newBuilder().setName("track_event")))
      .build();

  @TempDir Path dir;
  private FakeTraced fake;
  private String socket;

  @BeforeEach
  void start() throws IOException {
    fake = FakeTraced.startIn(dir);
    socket = fake.address();
  }

  @AfterEach
  void stop() {
    fake.close();
  }

  private static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void enableDisableReadWritesTheFakesPacketsAsATraceFile() throws Exception {
    fake.setPackets(FakeTraced.defaultPackets(25));
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      TracingSession session = consumer.enableTracing(CONFIG);
      assertFalse(session.disabled().isDone(), "EnableTracing answers only when the session ends");
      get(consumer.flush(Duration.ofSeconds(1), FlushFlags.CMD_TRACE_STOP));
      get(consumer.disableTracing());
      assertTrue(get(session.disabled()).ok());
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      TraceFileWriter writer = new TraceFileWriter(bytes);
      assertEquals(25L, get(consumer.readBuffers(writer)));
      writer.close();
      Trace trace = Trace.parseFrom(bytes.toByteArray());
      assertEquals(25, trace.getPacketCount());
      for (int i = 0; i < 25; i++) {
        assertArrayEquals(fake.packets().get(i), trace.getPacket(i).toByteArray());
      }
      get(consumer.freeBuffers());
    }
    assertEquals(CONFIG, fake.lastConfig());
    assertEquals(List.of("EnableTracing", "Flush", "DisableTracing", "ReadBuffers", "FreeBuffers"),
        fake.methodsCalled());
    FlushRequest flush = FlushRequest.parseFrom(fake.calls().get(1).args());
    assertEquals(1000, flush.getTimeoutMs());
    assertEquals(0x22, flush.getFlags());
  }

  @Test
  void packetsSpanningManySlicesAndRepliesAreJoined() throws Exception {
    fake.sliceBytes = 1;
    fake.slicesPerReply = 2;
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      consumer.enableTracing(CONFIG);
      get(consumer.disableTracing());
      List<byte[]> got = new ArrayList<>();
      assertEquals(10L, get(consumer.readBuffers((slices, size) -> {
        got.add(com.google.protobuf.ByteString.copyFrom(slices).toByteArray());
        assertTrue(slices.size() > 1 || size == 1);
      })));
      for (int i = 0; i < 10; i++) {
        assertArrayEquals(fake.packets().get(i), got.get(i));
      }
    }
  }

  @Test
  void durationEndsTheSessionOnTheServiceSide() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      TracingSession session = consumer.enableTracing(CONFIG.toBuilder().setDurationMs(100).build());
      assertTrue(get(session.disabled()).ok());
    }
  }

  @Test
  void serviceErrorComesBackInTheDisabledResult() throws Exception {
    fake.setEnableError("too many sessions");
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      TracingDisabled end = get(consumer.enableTracing(CONFIG).disabled());
      assertFalse(end.ok());
      assertEquals("too many sessions", end.error());
    }
  }

  @Test
  void lostConnectionEndsTheSessionWithAnError() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      TracingSession session = consumer.enableTracing(CONFIG);
      fake.close();
      TracingDisabled end = get(session.disabled());
      assertFalse(end.ok());
      assertTrue(end.error().contains("EnableTracing request rejected"), end.error());
      assertInstanceOf(IpcException.class, get(consumer.disconnected()));
    }
  }

  @Test
  void writeIntoFileSessionWritesThroughThePassedFd() throws Exception {
    Path out = dir.resolve("trace.pftrace");
    try (TracingConsumer consumer = TracingConsumer.connect(socket);
        FileOutputStream file = new FileOutputStream(out.toFile())) {
      int fd = OutputFds.fdOf(file.getChannel(), out);
      TracingSession session = consumer.enableTracing(CONFIG.toBuilder().setWriteIntoFile(true).build(), fd);
      get(consumer.disableTracing());
      assertTrue(get(session.disabled()).ok());
    }
    Trace trace = Trace.parseFrom(Files.readAllBytes(out));
    assertEquals(10, trace.getPacketCount());
  }

  @Test
  void detachThenAttachFromAnotherConnectionAndStop() throws Exception {
    try (TracingConsumer first = TracingConsumer.connect(socket)) {
      first.enableTracing(CONFIG);
      get(first.detach("k1"));
    }
    try (TracingConsumer second = TracingConsumer.connect(socket)) {
      TracingSession attached = get(second.attach("k1"));
      assertEquals(CONFIG, attached.traceConfig());
      assertFalse(attached.disabled().isDone());
      get(second.disableTracing());
      assertTrue(get(attached.disabled()).ok());
      ExecutionException e = assertThrows(ExecutionException.class, () -> get(second.attach("k1")));
      assertEquals(IpcException.Kind.REQUEST_FAILED, ((IpcException) e.getCause()).kind());
    }
  }

  @Test
  void queryServiceStateMergesStreamedParts() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      TracingServiceState state = get(consumer.queryServiceState(false));
      assertEquals("fake-traced 1.0", state.getTracingServiceVersion());
      assertEquals(1, state.getProducersCount());
      assertEquals(1, state.getDataSourcesCount());
      assertEquals(7, state.getTracingSessions(0).getId());
      assertTrue(get(consumer.queryCapabilities()).getHasQueryCapabilities());
      assertEquals(1, get(consumer.getTraceStats()).getBufferStatsCount());
    }
  }

  @Test
  void observeEventsDeliversEventsAndSkipsTheClosingReply() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      List<ObservableEvents> events = new ArrayList<>();
      get(consumer.observeEvents(List.of(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), events::add));
      assertEquals(1, events.size());
      assertTrue(events.get(0).getAllDataSourcesStarted());
    }
  }

  @Test
  void cloneAndBugreportReplies() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      assertTrue(get(consumer.cloneSession(CloneSessionRequest.newBuilder().setSessionId(7).build(), -1)).getSuccess());
      assertEquals("no session 8",
          get(consumer.cloneSession(CloneSessionRequest.newBuilder().setSessionId(8).build(), -1)).getError());
      assertEquals("no session", get(consumer.saveTraceForBugreport()).getMsg());
    }
  }

  @Test
  void olderServiceWithoutAMethodFailsCleanly() throws Exception {
    fake.close();
    Files.deleteIfExists(Path.of(socket));
    fake = FakeTraced.startWithout(socket, Set.of("CloneSession", "QueryCapabilities"));
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      assertFalse(consumer.supports("CloneSession"));
      assertTrue(consumer.supports("EnableTracing"));
      ExecutionException e = assertThrows(ExecutionException.class, () -> get(consumer.queryCapabilities()));
      assertEquals(IpcException.Kind.METHOD_NOT_FOUND, ((IpcException) e.getCause()).kind());
      // the rest still works, with ids taken from the reply
      TracingSession session = consumer.enableTracing(CONFIG);
      get(consumer.disableTracing());
      assertTrue(get(session.disabled()).ok());
      assertEquals(10L, get(consumer.readBuffers((s, n) -> { })));
    }
  }

  @Test
  void failingSinkFailsTheRead() throws Exception {
    try (TracingConsumer consumer = TracingConsumer.connect(socket)) {
      consumer.enableTracing(CONFIG);
      get(consumer.disableTracing());
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> get(consumer.readBuffers((s, n) -> {
            throw new IOException("disk full");
          })));
      assertEquals("disk full", e.getCause().getMessage());
    }
  }

  @Test
  void nothingListeningIsAnErrnoException() {
    ErrnoException e = assertThrows(ErrnoException.class,
        () -> TracingConsumer.connect(dir.resolve("none.sock").toString()));
    assertEquals("ENOENT", e.errnoName());
  }
}
