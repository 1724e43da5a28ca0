package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jperfetto.testing.Recordings;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.TestEvent;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Whole tracing sessions through jtraced's sockets: Java test producers and TracingConsumer. */
@Timeout(60)
class SessionIT extends SocketFixture {
  static TraceConfig config(int bufferKb, TraceConfig.BufferConfig.FillPolicy policy) {
    return TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(bufferKb).setFillPolicy(policy))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder().setName(DS)))
        .build();
  }

  static byte[] packet(int writer, int seq, int payloadBytes) {
    return TracePacket.newBuilder().setTimestamp(seq).setForTesting(TestEvent.newBuilder()
        .setCounter(writer).setSeqValue(seq).setStr("x".repeat(payloadBytes))).build().toByteArray();
  }

  /** Disables the session, checks it ended without error and reads the buffers. */
  static List<TracePacket> stopAndRead(TracingConsumer c, TracingSession session) throws Exception {
    c.disableTracing().get(10, TimeUnit.SECONDS);
    TracingDisabled disabled = session.disabled().get(10, TimeUnit.SECONDS);
    assertTrue(disabled.ok(), disabled.error());
    return read(c);
  }

  static List<TracePacket> read(TracingConsumer c) throws Exception {
    return Recordings.read(c, Duration.ofSeconds(20));
  }

  /** writer (TestEvent.counter) -> its seq values in the order read. */
  static Map<Long, List<Integer>> testPackets(List<TracePacket> packets, int uid) {
    Map<Long, List<Integer>> out = new HashMap<>();
    for (TracePacket p : packets) {
      if (p.hasForTesting()) {
        assertEquals(uid, p.getTrustedUid(), "trusted_uid stamped by the service");
        assertNotEquals(0, p.getTrustedPacketSequenceId());
        out.computeIfAbsent(p.getForTesting().getCounter(), k -> new ArrayList<>())
            .add(p.getForTesting().getSeqValue());
      }
    }
    return out;
  }

  static List<Integer> range(int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  @Test
  void oneProducerTwoWritersWithSpanningPatchedPackets() throws Exception {
    SocketProducer p = producer("prod");
    assertTrue(p.init.getDirectSmbPatchingSupported());
    assertFalse(p.init.getUsingShmemProvidedByProducer());
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(2048, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    SmbWriter w1 = p.startedWriter(1);
    SmbWriter w2 = p.writer(2, w1.targetBuffer);
    assertEquals(1, p.smbFdsReceived, "setup_tracing carried the SMB fd");
    for (int i = 0; i < 60; i++) {
      assertTrue(w1.write(packet(1, i, 40), false));
      // every 5th packet of writer 2 spans several 1 KiB chunks and needs a patch
      assertTrue(w2.write(packet(2, i, i % 5 == 0 ? 3000 : 100), true));
      if (i % 10 == 9) {
        p.commit();
      }
    }
    c.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(10, TimeUnit.SECONDS);
    List<TracePacket> packets = stopAndRead(c, session);
    Map<Long, List<Integer>> seqs = testPackets(packets, uid());
    assertEquals(range(60), seqs.get(1L));
    assertEquals(range(60), seqs.get(2L));
    assertTrue(packets.stream().anyMatch(TracePacket::hasTraceConfig), "service wrote the trace config");
    for (TracePacket pk : packets) {
      if (pk.hasForTesting() && pk.getForTesting().getCounter() == 2 && pk.getForTesting().getSeqValue() % 5 == 0) {
        assertEquals(3000, pk.getForTesting().getStr().length(), "patched spanning packet intact");
      }
    }
  }

  @Test
  void packetsLargerThanOneIpcFrameComeBackWhole() throws Exception {
    SocketProducer p = producer("big");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(4096, TraceConfig.BufferConfig.FillPolicy.DISCARD));
    SmbWriter w = p.startedWriter(1);
    assertTrue(w.write(packet(5, 0, 150_000), true)); // ~150 chunks, more than a 128 KiB frame
    assertTrue(w.write(packet(5, 1, 10), false));
    p.commit();
    List<TracePacket> packets = stopAndRead(c, session);
    assertEquals(range(2), testPackets(packets, uid()).get(5L));
    assertEquals(150_000, packets.stream().filter(TracePacket::hasForTesting)
        .findFirst().orElseThrow().getForTesting().getStr().length());
  }

  @Test
  void writeIntoFileGivesAFileThatParsesAsATrace() throws Exception {
    SocketProducer p = producer("to-file");
    TracingConsumer c = consumer();
    TraceConfig cfg = config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER).toBuilder()
        .setWriteIntoFile(true).build();
    int fd = org.jperfetto.os.MemFd.create("trace", 0);
    try {
      TracingSession session = c.enableTracing(cfg, fd);
      SmbWriter w = p.startedWriter(1);
      for (int i = 0; i < 25; i++) {
        assertTrue(w.write(packet(4, i, 300), false));
      }
      p.commit();
      c.disableTracing().get(10, TimeUnit.SECONDS);
      TracingDisabled disabled = session.disabled().get(10, TimeUnit.SECONDS);
      assertTrue(disabled.ok(), disabled.error());
      long size = org.jperfetto.os.MemFd.size(fd);
      assertTrue(size > 25 * 300, "file size " + size);
      byte[] bytes;
      try (var arena = java.lang.foreign.Arena.ofConfined()) {
        bytes = org.jperfetto.os.SharedMapping.map(fd, size, arena).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
      }
      org.jperfetto.protos.Trace trace = org.jperfetto.protos.Trace.parseFrom(bytes);
      assertEquals(range(25), testPackets(trace.getPacketList(), uid()).get(4L));
      assertTrue(trace.getPacketList().stream().anyMatch(TracePacket::hasTraceConfig));
    } finally {
      org.jperfetto.os.Fds.close(fd);
    }
  }

  @Test
  void refusedConfigAndDurationAutoStopAnswerEnableTracing() throws Exception {
    SocketProducer p = producer("prod");
    TracingConsumer c = consumer();
    TracingDisabled refused = c.enableTracing(TraceConfig.getDefaultInstance()).disabled().get(10, TimeUnit.SECONDS);
    assertFalse(refused.ok());
    assertTrue(refused.error().contains("no buffers"), refused.error());
    TracingSession timed = c.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER)
        .toBuilder().setDurationMs(200).build());
    p.await(CmdCase.START_DATA_SOURCE);
    // duration_ms ends the session by itself: flush, stop, then the deferred EnableTracing reply
    assertTrue(timed.disabled().get(10, TimeUnit.SECONDS).ok());
    p.await(CmdCase.STOP_DATA_SOURCE);
  }

  @Test
  void readingAFullLargeBufferDoesNotOverflowTheConsumerConnection() throws Exception {
    SocketProducer p = producer("bulk");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(16 * 1024, TraceConfig.BufferConfig.FillPolicy.DISCARD));
    SmbWriter w = p.startedWriter(1);
    int n = 8_000; // ~8 MiB: twice the host's 4 MiB per-connection send buffer
    for (int i = 0; i < n; i++) {
      assertTrue(w.write(packet(9, i, 1000), false));
      if (i % 64 == 63) {
        p.commit();
      }
    }
    p.commit();
    List<TracePacket> packets = stopAndRead(c, session);
    assertEquals(range(n), testPackets(packets, uid()).get(9L));
  }

  @Test
  void aProducerThatNeverOpensItsCommandStreamIsDroppedOnceCommandsPileUp() throws Exception {
    var gone = new java.util.concurrent.CompletableFuture<Object>();
    try (var client = org.jperfetto.ipc.IpcClient.connect(producerSocket, gone::complete)) {
      var port = client.bind("ProducerPort").get(10, TimeUnit.SECONDS);
      port.invoke("InitializeConnection", org.jperfetto.protos.InitializeConnectionRequest.newBuilder()
          .setProducerName("deaf").build()).get(10, TimeUnit.SECONDS);
      port.invoke("RegisterDataSource", org.jperfetto.protos.RegisterDataSourceRequest.newBuilder()
          .setDataSourceDescriptor(org.jperfetto.protos.DataSourceDescriptor.newBuilder().setName(DS)).build())
          .get(10, TimeUnit.SECONDS);
      TracingConsumer c = consumer();
      TracingSession session = c.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
      // In rounds that time out before the next: a session's pending flushes are bounded too.
      for (int sent = 0; sent < ProducerPortService.MAX_PENDING_COMMANDS + 10 && !gone.isDone(); ) {
        List<java.util.concurrent.CompletableFuture<Void>> flushes = new ArrayList<>();
        for (int i = 0; i < 200; i++, sent++) {
          flushes.add(c.flush(Duration.ofMillis(50), FlushFlags.NONE));
        }
        flushes.forEach(f -> f.handle((ok, err) -> null).join());
      }
      gone.get(20, TimeUnit.SECONDS);
      waitFor(() -> host.connectedProducers() == 0);
      assertTrue(stopAndRead(c, session).stream().anyMatch(TracePacket::hasTraceConfig));
    }
  }

  static int uid() throws Exception {
    return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
  }

  @Test
  void manyProducersOverTwoProducerSockets() throws Exception {
    host.close();
    String second = dir.resolve("p2.sock").toString();
    host = ServiceHost.start(ServiceHost.Options.of(producerSocket + "," + second, consumerSocket));
    List<SocketProducer> producers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SocketProducer p = closeLater(SocketProducer.connect(i % 2 == 0 ? producerSocket : second, "prod" + i, DS));
      producers.add(p);
    }
    assertEquals(4, host.connectedProducers());
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(1024, TraceConfig.BufferConfig.FillPolicy.DISCARD));
    for (int i = 0; i < producers.size(); i++) {
      SmbWriter w = producers.get(i).startedWriter(1);
      for (int s = 0; s < 30; s++) {
        // the counter names the producer; every producer's writer 1 is its own sequence
        assertTrue(w.write(packet(i, s, 200), false));
      }
      producers.get(i).commit();
    }
    Map<Long, List<Integer>> seqs = testPackets(stopAndRead(c, session), uid());
    for (long i = 0; i < producers.size(); i++) {
      assertEquals(range(30), seqs.get(i), "producer " + i);
    }
  }

  @Test
  void flushWithAProducerThatNeverAcksTimesOutAndTheConsumerIsStillServed() throws Exception {
    SocketProducer p = producer("silent");
    p.ackFlushes = false;
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    p.startedWriter(1);
    long t0 = System.nanoTime();
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> c.flush(Duration.ofMillis(300), FlushFlags.NONE).get(10, TimeUnit.SECONDS));
    assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(250), "waited for the timeout");
    p.await(CmdCase.FLUSH);
    assertFalse(stopAndRead(c, session).isEmpty(), "service packets still readable: " + e.getMessage());
  }

  @Test
  void producerKilledMidSessionKeepsWhatItCommitted() throws Exception {
    SocketProducer doomed = producer("doomed");
    SocketProducer survivor = producer("survivor");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(1024, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    SmbWriter wd = doomed.startedWriter(1);
    SmbWriter ws = survivor.startedWriter(1);
    for (int i = 0; i < 20; i++) {
      wd.write(packet(7, i, 100), false);
      ws.write(packet(8, i, 100), false);
    }
    doomed.commit();
    doomed.close();
    waitFor(() -> host.connectedProducers() == 1);
    for (int i = 20; i < 40; i++) {
      ws.write(packet(8, i, 100), false);
    }
    survivor.commit();
    Map<Long, List<Integer>> seqs = testPackets(stopAndRead(c, session), uid());
    assertEquals(range(20), seqs.get(7L));
    assertEquals(range(40), seqs.get(8L));
  }

  @Test
  void consumerDisconnectEndsTheSession() throws Exception {
    SocketProducer p = producer("prod");
    TracingConsumer c = TracingConsumer.connect(consumerSocket);
    c.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    long instance = p.await(CmdCase.START_DATA_SOURCE).getStartDataSource().getNewInstanceId();
    c.close();
    assertEquals(instance, p.await(CmdCase.STOP_DATA_SOURCE).getStopDataSource().getInstanceId());
    // the consumer's quota is free again: a new consumer can trace
    TracingConsumer again = consumer();
    TracingSession s = again.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    p.await(CmdCase.START_DATA_SOURCE);
    again.disableTracing().get(10, TimeUnit.SECONDS);
    assertTrue(s.disabled().get(10, TimeUnit.SECONDS).ok());
  }

  @Test
  void misbehavingProducersAreDroppedAndOthersUnaffected() throws Exception {
    SocketProducer good = producer("good");
    SocketProducer garbage = producer("garbage");
    TracingConsumer c = consumer();
    TracingSession session = c.enableTracing(config(1024, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    SmbWriter w = good.startedWriter(1);
    garbage.await(CmdCase.START_DATA_SOURCE);
    for (int i = 0; i < 10; i++) {
      w.write(packet(1, i, 100), false);
    }
    // CommitData naming chunks far outside the SMB, over and over: ABI violations get it dropped
    CommitDataRequest.Builder bad = CommitDataRequest.newBuilder();
    for (int i = 0; i < 400; i++) {
      bad.addChunksToMove(
          CommitDataRequest.ChunksToMove.newBuilder().setPage(100_000 + i).setChunk(13).setTargetBuffer(1));
    }
    garbage.port.invoke("CommitData", bad.build());
    garbage.disconnected.get(10, TimeUnit.SECONDS);
    // a raw peer sending a frame over the 128 KiB cap is dropped by the IPC layer
    try (UnixSocket raw = UnixSocket.connect(producerSocket)) {
      var seg = java.lang.foreign.MemorySegment.ofArray(new byte[] {0, 0, 0, 0x7f, 1, 2, 3, 4});
      raw.send(seg, 0, 8, -1);
      byte[] sink = new byte[16];
      assertEquals(0, raw.receive(java.lang.foreign.MemorySegment.ofArray(sink), 0, 16, new int[] {-1}),
          "host closed the connection");
    }
    for (int i = 10; i < 20; i++) {
      w.write(packet(1, i, 100), false);
    }
    good.commit();
    assertTrue(good.client.isConnected());
    assertEquals(range(20), testPackets(stopAndRead(c, session), uid()).get(1L));
  }

  @Test
  void methodsBeforeInitializeConnectionFail() throws Exception {
    try (var client = org.jperfetto.ipc.IpcClient.connect(producerSocket)) {
      var port = client.bind("ProducerPort").get(10, TimeUnit.SECONDS);
      assertThrows(ExecutionException.class, () -> port.invoke("RegisterDataSource",
          org.jperfetto.protos.RegisterDataSourceRequest.getDefaultInstance()).get(10, TimeUnit.SECONDS));
      port.invoke("InitializeConnection", org.jperfetto.protos.InitializeConnectionRequest.newBuilder()
          .setProducerName("late").build()).get(10, TimeUnit.SECONDS);
      assertThrows(ExecutionException.class, () -> port.invoke("InitializeConnection",
          org.jperfetto.protos.InitializeConnectionRequest.getDefaultInstance()).get(10, TimeUnit.SECONDS),
          "a second InitializeConnection is refused");
      port.invoke("Sync", org.jperfetto.protos.SyncRequest.getDefaultInstance()).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void sessionManagementMethodsAreServed() throws Exception {
    producer("listed");
    TracingConsumer c = consumer();
    assertTrue(c.supports("CloneSession"));
    assertTrue(c.queryCapabilities().get(10, TimeUnit.SECONDS) != null);
    var state = c.queryServiceState(false).get(10, TimeUnit.SECONDS);
    assertTrue(state.getProducersList().stream().anyMatch(p -> p.getName().equals("listed")), state.toString());
    assertTrue(state.getDataSourcesList().stream().anyMatch(d -> d.getDsDescriptor().getName().equals(DS)));
    assertThrows(ExecutionException.class, () -> c.attach("no-such-key").get(10, TimeUnit.SECONDS),
        "attach without a detached session fails cleanly");
    assertTrue(c.getTraceStats().get(10, TimeUnit.SECONDS) != null);
  }

  static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(10);
    }
  }
}
