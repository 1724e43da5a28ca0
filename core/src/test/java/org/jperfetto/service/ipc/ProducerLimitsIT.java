package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jperfetto.service.ipc.SessionIT.config;
import static org.jperfetto.service.ipc.SessionIT.waitFor;

import com.google.protobuf.MessageLite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.RawPeer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.GetAsyncCommandRequest;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.RegisterDataSourceResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.UnregisterDataSourceRequest;
import org.jperfetto.service.ServiceLimits;
import org.junit.jupiter.api.Test;

/**
 * What one producer may make the service hold: registered data sources (count and descriptor
 * bytes), commands waiting for a GetAsyncCommand stream it does not open, and (through its
 * sessions' consumers) flushes waiting for its acks. Each bound refuses or drops with a reason and
 * leaves the service serving the others.
 */
class ProducerLimitsIT extends SocketFixture {
  private <T> T onService(Callable<T> task) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    host.runner().post(() -> {
      try {
        result.complete(task.call());
      } catch (Exception e) {
        result.completeExceptionally(e);
      }
    });
    return result.get(10, TimeUnit.SECONDS);
  }

  private static String register(BoundService port, DataSourceDescriptor d) throws Exception {
    return RegisterDataSourceResponse.parseFrom(port.invoke("RegisterDataSource",
        RegisterDataSourceRequest.newBuilder().setDataSourceDescriptor(d).build()).get(10, TimeUnit.SECONDS).bytes())
        .getError();
  }

  private BoundService initialized(IpcClient client, String name) throws Exception {
    BoundService port = client.bind("ProducerPort").get(10, TimeUnit.SECONDS);
    port.invoke("InitializeConnection", InitializeConnectionRequest.newBuilder().setProducerName(name).build())
        .get(10, TimeUnit.SECONDS);
    return port;
  }

  @Test
  void aProducerPastItsDataSourcesIsRefusedWithAReasonAndOthersRegisterOn() throws Exception {
    try (IpcClient client = IpcClient.connect(producerSocket, e -> { });
        IpcClient large = IpcClient.connect(producerSocket, e -> { })) {
      BoundService port = initialized(client, "many");
      for (int i = 0; i < ServiceLimits.MAX_DATA_SOURCES_PER_PRODUCER; i++) {
        assertEquals("", register(port, DataSourceDescriptor.newBuilder().setName("ds" + i).build()));
      }
      String error = register(port, DataSourceDescriptor.newBuilder().setName("one.more").build());
      assertTrue(error.contains("limit is " + ServiceLimits.MAX_DATA_SOURCES_PER_PRODUCER), error);
      port.invoke("UnregisterDataSource", UnregisterDataSourceRequest.newBuilder().setDataSourceName("ds0").build())
          .get(10, TimeUnit.SECONDS);
      assertEquals("", register(port, DataSourceDescriptor.newBuilder().setName("one.more").build()),
          "a freed place can be taken again");

      // Descriptors near a frame each: the bytes' bound comes first.
      BoundService big = initialized(large, "large");
      String name = "x".repeat(120 * 1024);
      int accepted = 0;
      while (register(big, DataSourceDescriptor.newBuilder().setName(name + accepted).build()).isEmpty()) {
        accepted++;
        assertTrue(accepted < 100, "no bound on descriptor bytes");
      }
      assertEquals(ServiceLimits.MAX_DESCRIPTOR_BYTES_PER_PRODUCER / (120 * 1024 + 8), accepted);
      assertEquals(2L, (long) onService(() -> host.service().dataSourcesRefused()));

      // Another producer registers as usual.
      producer("other");
      TracingConsumer c = consumer();
      var state = c.queryServiceState(false).get(10, TimeUnit.SECONDS);
      assertEquals(ServiceLimits.MAX_DATA_SOURCES_PER_PRODUCER + accepted + 1, state.getDataSourcesCount());
    }
  }

  @Test
  void commandsHeldForAProducerWithoutAStreamAreBoundedInBytes() throws Exception {
    CompletableFuture<Object> gone = new CompletableFuture<>();
    try (IpcClient client = IpcClient.connect(producerSocket, gone::complete)) {
      BoundService port = initialized(client, "deaf");
      for (int i = 0; i < 30; i++) { // each becomes an instance, with a setup and a start command
        assertEquals("", register(port, DataSourceDescriptor.newBuilder().setName(DS).build()));
      }
      TraceConfig.Builder cfg = config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER).toBuilder();
      cfg.getDataSourcesBuilder(0).setConfig(DataSourceConfig.newBuilder().setName(DS)
          .setLegacyConfig("c".repeat(100 * 1024))); // 30 x 2 commands of 100 KiB: 6 MiB, 60 commands
      consumer().enableTracing(cfg.build());
      gone.get(20, TimeUnit.SECONDS);
      waitFor(() -> host.connectedProducers() == 0);
      assertTrue(60 < ProducerPortService.MAX_PENDING_COMMANDS, "dropped for the bytes, not the count");
    }
    producer("after"); // the service goes on
    assertEquals(1, host.connectedProducers());
  }

  /** Sends an InvokeMethod on the raw peer and returns nothing: the test decides what it reads. */
  private static void invoke(RawPeer peer, long requestId, int serviceId, int methodId,
      MessageLite args) throws Exception {
    peer.send(IPCFrame.newBuilder().setRequestId(requestId)
        .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(serviceId)
            .setMethodId(methodId).setArgsProto(args.toByteString())).build());
  }

  @Test
  void aProducerThatStopsReadingItsCommandsIsDroppedAndTheOthersGoOn() throws Exception {
    try (RawPeer deaf = new RawPeer(producerSocket)) {
      deaf.send(IPCFrame.newBuilder().setRequestId(1).setMsgBindService(
          IPCFrame.BindService.newBuilder().setServiceName("ProducerPort")).build());
      var bound = deaf.next().getMsgBindServiceReply();
      Map<String, Integer> ids = new HashMap<>();
      bound.getMethodsList().forEach(m -> ids.put(m.getName(), m.getId()));
      int service = bound.getServiceId();
      invoke(deaf, 2, service, ids.get("InitializeConnection"),
          InitializeConnectionRequest.newBuilder().setProducerName("deaf").build());
      for (int i = 0; i < 30; i++) {
        invoke(deaf, 3 + i, service, ids.get("RegisterDataSource"), RegisterDataSourceRequest.newBuilder()
            .setDataSourceDescriptor(DataSourceDescriptor.newBuilder().setName(DS)).build());
      }
      invoke(deaf, 100, service, ids.get("GetAsyncCommand"),
          GetAsyncCommandRequest.getDefaultInstance());
      waitFor(() -> host.connectedProducers() == 1);
      SocketProducer other = producer("other");
      TraceConfig.Builder cfg = config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER).toBuilder();
      cfg.getDataSourcesBuilder(0).setConfig(DataSourceConfig.newBuilder().setName(DS)
          .setLegacyConfig("c".repeat(100 * 1024))); // 6 MiB of commands for the producer that reads none
      TracingConsumer c = consumer();
      var session = c.enableTracing(cfg.build());
      waitFor(() -> host.connectedProducers() == 1); // the deaf one is gone
      var stats = host.producerHostStats();
      assertEquals(1, stats.sendTimeouts() + stats.sendOverflows(), "dropped for not reading: " + stats);
      assertTrue(other.startedWriter(1).write(SessionIT.packet(1, 0, 10), false));
      other.commit();
      assertEquals(1, SessionIT.stopAndRead(c, session).stream()
          .filter(TracePacket::hasForTesting).count(), "the other producer's session is whole");
    }
  }

  @Test
  void flushesPastThePendingLimitFailAtOnce() throws Exception {
    SocketProducer p = producer("slow");
    p.ackFlushes = false;
    TracingConsumer c = consumer();
    c.enableTracing(config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    p.startedWriter(1);
    int extra = 5;
    List<CompletableFuture<Void>> flushes = new ArrayList<>();
    for (int i = 0; i < ServiceLimits.MAX_PENDING_FLUSHES + extra; i++) {
      flushes.add(c.flush(Duration.ofSeconds(30), FlushFlags.NONE));
    }
    waitFor(() -> flushes.stream().filter(CompletableFuture::isDone).count() == extra);
    Thread.sleep(200);
    assertEquals(extra, flushes.stream().filter(CompletableFuture::isCompletedExceptionally).count(),
        "only the flushes past the limit failed, the others wait for the producer");
    assertEquals(1, c.queryServiceState(true).get(10, TimeUnit.SECONDS).getTracingSessionsCount());
    assertEquals(1, host.connectedProducers(), "the producer is not blamed for the flood");
  }
}
