package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.Fds;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class IpcIT {
  @TempDir
  Path dir;
  String path;
  IpcHost host;
  final List<String> events = new CopyOnWriteArrayList<>();
  final List<MethodCall> parked = Collections.synchronizedList(new ArrayList<>());
  UnixSocket fdSource;

  static String fdLink(int fd) throws IOException {
    return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
  }

  static ByteString utf8(String s) {
    return ByteString.copyFromUtf8(s);
  }

  /** The test service: every behaviour a test needs, by method name. */
  ServiceDefinition greeter() {
    return ServiceDefinition.builder("Greeter")
        .method("Echo", call -> call.reply(call.args()))
        .method("Stream", call -> {
          int n = Integer.parseInt(call.args().toStringUtf8());
          for (int i = 0; i < n - 1; i++) {
            call.replyMore(utf8(Integer.toString(i)));
          }
          call.reply(utf8(Integer.toString(n - 1)));
        })
        .method("TakeFd", call -> {
          int fd = call.takeReceivedFd();
          call.reply(utf8(fd < 0 ? "none" : fdLink(fd)));
          if (fd >= 0) {
            Fds.close(fd);
          }
        })
        .method("GiveFd", call -> call.send(utf8(fdLink(fdSource.fd())),
            !call.args().toStringUtf8().equals("final"), Fds.dup(fdSource.fd())))
        .method("Whoami", call -> call.reply(utf8(call.client().pid() + " " + call.client().uid()
            + " " + call.replyExpected())))
        .method("Park", parked::add)
        .method("Throw", call -> {
          throw new IllegalStateException("handler bug");
        })
        .method("Later", call -> Thread.ofPlatform().start(() -> call.reply(utf8("from " + call.methodName()))))
        .method("NoReply", call -> events.add("noreply " + call.args().toStringUtf8() + " " + call.replyExpected()))
        .method("Decode", call -> call.reply(IPCFrame.parseFrom(call.args()).toByteString()))
        .listener(new ServiceListener() {
          @Override
          public void onClientBound(ClientInfo client) {
            events.add("bound " + client.clientId());
          }

          @Override
          public void onClientDisconnected(ClientInfo client) {
            events.add("gone " + client.clientId());
          }
        })
        .build();
  }

  @BeforeEach
  void start() throws IOException {
    path = dir.resolve("ipc.sock").toString();
    fdSource = UnixSocket.listen("@jperfetto-ipc-it-" + System.nanoTime(), 1);
    host = IpcHost.start(path, List.of(ServiceDefinition.builder("Other").method("X", MethodCall::fail).build(),
        greeter()));
  }

  @AfterEach
  void stop() {
    host.close();
    fdSource.close();
  }

  static <T> T await(CompletableFuture<T> future) throws Exception {
    return future.get(20, TimeUnit.SECONDS);
  }

  static IpcException failure(CompletableFuture<?> future) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(20, TimeUnit.SECONDS));
    return assertInstanceOf(IpcException.class, e.getCause());
  }

  @Test
  void bindAnnouncesServiceIdAndMethodIdsInDeclarationOrder() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      assertEquals(2, greeter.serviceId());
      assertEquals(1, greeter.methodIds().get("Echo"));
      assertEquals(9, greeter.methodIds().get("NoReply"));
      assertEquals(10, greeter.methodIds().size());
      assertEquals(1, await(client.bind("Other")).serviceId());
      IpcException e = failure(client.bind("Missing"));
      assertEquals(IpcException.Kind.SERVICE_NOT_FOUND, e.kind());
      assertTrue(client.isConnected());
    }
  }

  @Test
  void tenThousandInvocationsSequentialAndPipelined() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      for (int i = 0; i < 5_000; i++) {
        assertEquals(utf8("seq " + i), await(greeter.invoke("Echo", utf8("seq " + i))).bytes());
      }
      List<CompletableFuture<Reply>> futures = new ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        futures.add(greeter.invoke("Echo", utf8("pipe " + i)));
      }
      for (int i = 0; i < 5_000; i++) {
        Reply reply = await(futures.get(i));
        assertEquals(utf8("pipe " + i), reply.bytes());
        assertFalse(reply.hasMore());
        assertEquals(-1, reply.fd());
      }
    }
    assertEquals(10_000, host.stats().invocations());
  }

  @Test
  void aReadCapOfOneEndsEveryReadThatBroughtBytesThere() throws Exception {
    assertThrows(IllegalArgumentException.class, () -> host.readsPerEvent(0));
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      await(greeter.invoke("Echo", utf8("first")));
      long capsBefore = host.stats().readCapHits();
      host.readsPerEvent(1);
      try {
        long reads = host.stats().receives();
        for (int i = 0; i < 20; i++) {
          await(greeter.invoke("Echo", utf8("capped " + i)));
        }
        // Each read that brought bytes used up the cap (counted once the reply is out: wait for it).
        waitFor(() -> host.stats().readCapHits() - capsBefore == host.stats().receives() - reads);
        long capped = host.stats().readCapHits() - capsBefore;
        assertTrue(capped >= 20, "capped reads: " + capped);
      } finally {
        host.readsPerEvent(IpcHost.DEFAULT_READS_PER_EVENT);
      }
    }
  }

  @Test
  void streamOfAThousandReplies() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      List<Reply> replies = new CopyOnWriteArrayList<>();
      await(greeter.invokeStreaming("Stream", utf8("1000"), -1, replies::add));
      assertEquals(1000, replies.size());
      for (int i = 0; i < 1000; i++) {
        assertEquals(utf8(Integer.toString(i)), replies.get(i).bytes());
        assertEquals(i < 999, replies.get(i).hasMore());
      }
      // A plain invoke of a streaming method completes with the last reply.
      assertEquals(utf8("9"), await(greeter.invoke("Stream", utf8("10"))).bytes());
    }
  }

  @Test
  void fdsTravelBothWays() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      String expected = fdLink(fdSource.fd());
      int before = Fds.openFdCount();
      for (int i = 0; i < 50; i++) {
        assertEquals(utf8(expected), await(greeter.invoke("TakeFd", ByteString.EMPTY, Fds.dup(fdSource.fd()))).bytes());
        assertEquals(utf8("none"), await(greeter.invoke("TakeFd", ByteString.EMPTY)).bytes());
        Reply reply = await(greeter.invoke("GiveFd", utf8("final")));
        assertFalse(reply.hasMore());
        assertEquals(expected, fdLink(reply.fd()));
        Fds.close(reply.fd());
        AtomicReference<Reply> streamed = new AtomicReference<>();
        CompletableFuture<Void> done = greeter.invokeStreaming("GiveFd", ByteString.EMPTY, -1, streamed::set);
        assertFalse(done.isCompletedExceptionally());
        // GiveFd never sends a final reply: wait for the first one.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (streamed.get() == null && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        Reply withFd = streamed.get();
        assertNotNull(withFd);
        assertTrue(withFd.hasMore());
        assertTrue(withFd.fd() >= 0);
        assertEquals(expected, fdLink(withFd.fd()));
        assertEquals(utf8(expected), withFd.bytes());
        Fds.close(withFd.fd());
      }
      // Every fd sent was closed by its sender once sent, every fd received by its owner.
      // The host closes its copies on its loop thread, soon after sending: wait for it, bounded.
      waitFor(() -> Fds.openFdCount() == before);
    }
  }

  @Test
  void unknownMethodFailsCleanlyWithoutSending() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      IpcException e = failure(greeter.invoke("NewerMethod", ByteString.EMPTY));
      assertEquals(IpcException.Kind.METHOD_NOT_FOUND, e.kind());
      assertTrue(e.getMessage().contains("NewerMethod") && e.getMessage().contains("Greeter"), e.getMessage());
      assertThrows(IpcException.class, () -> greeter.invokeNoReply("NewerMethod", ByteString.EMPTY, -1));
      assertEquals(IpcException.Kind.REQUEST_FAILED, failure(greeter.invoke("Throw", ByteString.EMPTY)).kind());
      assertEquals(utf8("still"), await(greeter.invoke("Echo", utf8("still"))).bytes());
    }
  }

  @Test
  void hostAnswersUnknownIdsWithFailedRepliesAndKeepsTheConnection() throws Exception {
    try (RawPeer peer = new RawPeer(path)) {
      peer.send(IPCFrame.newBuilder().setRequestId(1)
          .setMsgBindService(IPCFrame.BindService.newBuilder().setServiceName("Nope")).build());
      IPCFrame bindReply = peer.next();
      assertEquals(1, bindReply.getRequestId());
      assertTrue(bindReply.hasMsgBindServiceReply());
      assertFalse(bindReply.getMsgBindServiceReply().hasSuccess()); // left unset, as upstream does
      for (int[] ids : new int[][] {{2, 99}, {7, 1}, {2, 0}, {0, 1}}) {
        peer.send(IPCFrame.newBuilder().setRequestId(10 + ids[1])
            .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(ids[0]).setMethodId(ids[1])
                .setDropReply(true)).build());
        IPCFrame reply = peer.next();
        assertEquals(10 + ids[1], reply.getRequestId());
        assertTrue(reply.getMsgInvokeMethodReply().hasSuccess());
        assertFalse(reply.getMsgInvokeMethodReply().getSuccess());
      }
      peer.send(IPCFrame.newBuilder().setRequestId(50).build()); // no msg at all
      IPCFrame error = peer.next();
      assertEquals(50, error.getRequestId());
      assertEquals("unknown request", error.getMsgRequestError().getError());
      peer.send(IPCFrame.newBuilder().setRequestId(51).setSetPeerIdentity(
          IPCFrame.SetPeerIdentity.newBuilder().setPid(1).setUid(0)).build()); // ignored: no answer
      peer.send(IPCFrame.newBuilder().setRequestId(52)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(2).setMethodId(5)).build());
      IPCFrame whoami = peer.next();
      assertEquals(52, whoami.getRequestId());
      assertEquals(ProcessHandle.current().pid() + " " + currentUid() + " true",
          whoami.getMsgInvokeMethodReply().getReplyProto().toStringUtf8());
    }
    assertEquals(6, host.stats().rejectedRequests());
  }

  static int currentUid() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("Uid:")) {
        return Integer.parseInt(line.split("\\s+")[1]);
      }
    }
    throw new IOException("no Uid line");
  }

  @Test
  void dropReplyRunsTheHandlerAndSendsNothing() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      greeter.invokeNoReply("NoReply", utf8("a"), -1);
      greeter.invokeNoReply("Echo", utf8("dropped"), Fds.dup(fdSource.fd()));
      assertEquals(utf8("after"), await(greeter.invoke("Echo", utf8("after"))).bytes());
      assertTrue(events.contains("noreply a false"), events.toString());
    }
    try (RawPeer peer = new RawPeer(path)) {
      peer.send(IPCFrame.newBuilder().setRequestId(1)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(2).setMethodId(1)
              .setArgsProto(utf8("x")).setDropReply(true)).build());
      peer.send(IPCFrame.newBuilder().setRequestId(2)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(2).setMethodId(1)
              .setArgsProto(utf8("y"))).build());
      assertEquals(2, peer.next().getRequestId());
    }
  }

  @Test
  @SuppressWarnings("try") // the client is closed inside its block: what happens to a call in flight is the test
  void repliesFromAnotherThreadAndLateRepliesAfterDisconnect() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      assertEquals(utf8("from Later"), await(greeter.invoke("Later", ByteString.EMPTY)).bytes());
      CompletableFuture<Reply> parkedCall = greeter.invoke("Park", ByteString.EMPTY);
      while (parked.isEmpty()) {
        Thread.sleep(1);
      }
      client.close();
      assertEquals(IpcException.Kind.CONNECTION_LOST, failure(parkedCall).kind());
    }
    // Answering a call whose client is gone is harmless.
    parked.get(0).reply(utf8("too late"));
    assertThrows(IllegalStateException.class, () -> parked.get(0).reply(utf8("twice")));
    waitFor(() -> events.contains("gone 1"));
    assertEquals(List.of("bound 1", "gone 1"), events);
  }

  @Test
  void hostGoingAwayFailsPendingCallsAndTellsTheListener() throws Exception {
    CompletableFuture<IpcException> lost = new CompletableFuture<>();
    try (IpcClient client = IpcClient.connect(path, lost::complete)) {
      BoundService greeter = await(client.bind("Greeter"));
      List<Reply> replies = new CopyOnWriteArrayList<>();
      CompletableFuture<Void> stream = greeter.invokeStreaming("Park", ByteString.EMPTY, -1, replies::add);
      CompletableFuture<Reply> call = greeter.invoke("Park", ByteString.EMPTY);
      waitFor(() -> parked.size() == 2);
      parked.get(0).replyMore(utf8("first"));
      waitFor(() -> replies.size() == 1);
      host.close();
      assertEquals(IpcException.Kind.CONNECTION_LOST, failure(stream).kind());
      assertEquals(IpcException.Kind.CONNECTION_LOST, failure(call).kind());
      assertEquals(IpcException.Kind.CONNECTION_LOST, lost.get(10, TimeUnit.SECONDS).kind());
      assertFalse(client.isConnected());
      assertEquals(IpcException.Kind.CONNECTION_LOST, failure(greeter.invoke("Echo", ByteString.EMPTY)).kind());
    }
  }

  @Test
  void tooLargeOrMalformedFrameDropsOnlyThatPeer() throws Exception {
    try (IpcClient good = IpcClient.connect(path); RawPeer big = new RawPeer(path); RawPeer bad = new RawPeer(path)) {
      BoundService greeter = await(good.bind("Greeter"));
      big.sendBytes(new byte[] {(byte) 0xfd, (byte) 0xff, 0x01, 0x00, 1, 2, 3}, -1); // 131073 with prefix
      assertTrue(big.awaitEof());
      bad.sendBytes(new byte[] {3, 0, 0, 0, 0x12, 0x05, 0x01}, -1);
      assertTrue(bad.awaitEof());
      assertEquals(utf8("fine"), await(greeter.invoke("Echo", utf8("fine"))).bytes());
      HostStats stats = host.stats();
      assertEquals(1, stats.framesTooLarge());
      assertEquals(1, stats.malformedFrames());
      assertEquals(2, stats.dropped());
    }
  }

  @Test
  void undecodableArgumentsGetAFailedReplyAndOneShortLogLinePerUid() throws Exception {
    java.util.logging.Logger jul = java.util.logging.Logger.getLogger(IpcHost.class.getName());
    List<java.util.logging.LogRecord> records = new CopyOnWriteArrayList<>();
    java.util.logging.Handler capture = new java.util.logging.Handler() {
      @Override public void publish(java.util.logging.LogRecord r) { records.add(r); }
      @Override public void flush() { }
      @Override public void close() { }
    };
    jul.addHandler(capture);
    try (IpcClient a = IpcClient.connect(path); IpcClient b = IpcClient.connect(path)) {
      ByteString garbage = ByteString.copyFrom(new byte[] {0x12, 0x05, 0x01}); // truncated field
      for (IpcClient client : List.of(a, b)) {
        BoundService greeter = await(client.bind("Greeter"));
        for (int i = 0; i < 50; i++) {
          assertEquals(IpcException.Kind.REQUEST_FAILED, failure(greeter.invoke("Decode", garbage)).kind());
        }
        assertEquals(utf8("still"), await(greeter.invoke("Echo", utf8("still"))).bytes());
      }
    } finally {
      jul.removeHandler(capture);
    }
    // 100 bad requests from one uid, over two connections: one line, no stack trace.
    assertEquals(1, records.size(),
        () -> records.stream().map(java.util.logging.LogRecord::getMessage).toList().toString());
    java.util.logging.LogRecord line = records.getFirst();
    assertEquals(null, line.getThrown());
    assertTrue(line.getMessage().contains("undecodable arguments to Greeter.Decode"), line.getMessage());
    assertTrue(line.getMessage().length() < 400, line.getMessage());
  }

  @Test
  void aPeerClosingWithUnreadRepliesIsAnOrderlyDisconnect() throws Exception {
    for (int round = 0; round < 5; round++) {
      long before = host.stats().invocations();
      try (RawPeer peer = new RawPeer(path)) {
        for (int i = 0; i < 20; i++) { // replies the peer never reads: its close resets the socket
          peer.send(IPCFrame.newBuilder().setRequestId(i + 1).setMsgInvokeMethod(IPCFrame.InvokeMethod
              .newBuilder().setServiceId(2).setMethodId(1).setArgsProto(utf8("unread"))).build());
        }
        waitFor(() -> host.stats().invocations() == before + 20);
      }
      waitFor(() -> host.stats().connections() == 0);
    }
    assertEquals(0, host.stats().dropped(), "ECONNRESET after an orderly close is not a drop");
  }

  @Test
  void framesNearTheCapAreServedAndLargerOnesRefusedBeforeSending() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      // InvokeMethodReply overhead is small: find the largest echo that still fits in one frame.
      int size = Frames.MAX_PAYLOAD_SIZE - 32;
      ByteString big = ByteString.copyFrom(new byte[size]);
      assertEquals(big, await(greeter.invoke("Echo", big)).bytes());
      ByteString tooBig = ByteString.copyFrom(new byte[Frames.MAX_FRAME_SIZE]);
      assertEquals(IpcException.Kind.SEND_FAILED, failure(greeter.invoke("Echo", tooBig)).kind());
    }
  }

  @Test
  void oneLoopServesHundredsOfClientsWhileAPeerDoesNotDrain() throws Exception {
    ServiceDefinition flood = ServiceDefinition.builder("Flood")
        .method("Flood", call -> {
          ByteString chunk = ByteString.copyFrom(new byte[64 * 1024]);
          for (int i = 0; i < 200; i++) { // 12.8 MiB > socket buffer + 4 MiB bound
            call.replyMore(chunk);
          }
        }).build();
    String floodPath = dir.resolve("flood.sock").toString();
    try (IpcHost floodHost = IpcHost.start(floodPath, List.of(flood, greeter()));
         RawPeer slow = new RawPeer(floodPath)) {
      slow.send(IPCFrame.newBuilder().setRequestId(1)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(1).setMethodId(1)).build());
      List<IpcClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < 200; i++) {
          clients.add(IpcClient.connect(floodPath));
        }
        List<CompletableFuture<Reply>> replies = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
          int n = i;
          replies.add(clients.get(i).bind("Greeter")
              .thenCompose(g -> g.invoke("Echo", utf8("client " + n))));
        }
        for (int i = 0; i < replies.size(); i++) {
          assertEquals(utf8("client " + i), await(replies.get(i)).bytes());
        }
        waitFor(() -> floodHost.stats().sendOverflows() == 1);
        assertEquals(0, floodHost.stats().malformedFrames()); // dropped mid-handler: not a bad frame
        assertEquals(1, floodHost.stats().dropped());
        assertEquals(201, floodHost.stats().accepted());
        assertEquals(200, floodHost.stats().connections());
      } finally {
        clients.forEach(IpcClient::close);
      }
      waitFor(() -> floodHost.stats().connections() == 0);
    }
  }

  @Test
  void aPeerThatStopsReadingIsDroppedAfterTheSendTimeoutAndOthersAreServed() throws Exception {
    ServiceDefinition flood = ServiceDefinition.builder("Flood")
        .method("Flood", call -> {
          ByteString chunk = ByteString.copyFrom(new byte[64 * 1024]);
          for (int i = 0; i < 16; i++) { // 1 MiB: over the socket buffer, under the 4 MiB bound
            call.replyMore(chunk);
          }
        }).build();
    String floodPath = dir.resolve("stall.sock").toString();
    try (IpcHost floodHost = IpcHost.start(floodPath, List.of(flood, greeter()));
         RawPeer stalled = new RawPeer(floodPath); RawPeer slow = new RawPeer(floodPath);
         IpcClient other = IpcClient.connect(floodPath)) {
      floodHost.setSendTimeoutMs(1000);
      IPCFrame invoke = IPCFrame.newBuilder().setRequestId(1)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(1).setMethodId(1)).build();
      long start = System.nanoTime();
      stalled.send(invoke);
      slow.send(invoke);
      Thread.sleep(300); // slow: pauses well under the timeout, then reads everything
      for (int i = 0; i < 16; i++) {
        assertEquals(1, slow.next().getRequestId());
      }
      BoundService greeter = await(other.bind("Greeter"));
      assertEquals(utf8("meanwhile"), await(greeter.invoke("Echo", utf8("meanwhile"))).bytes());
      waitFor(() -> floodHost.stats().sendTimeouts() == 1 && floodHost.stats().connections() == 2);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(ms >= 900, "dropped after " + ms + " ms, before the timeout");
      assertEquals(0, floodHost.stats().sendOverflows());
      assertEquals(1, floodHost.stats().dropped());
      assertEquals(utf8("after"), await(greeter.invoke("Echo", utf8("after"))).bytes());
    }
  }

  @Test
  void repliesFromAnotherThreadCountAgainstThePeersBoundBeforeTheLoopTakesThem() throws Exception {
    CompletableFuture<MethodCall> called = new CompletableFuture<>();
    ServiceDefinition stream = ServiceDefinition.builder("Stream").method("Open", called::complete).build();
    String path = dir.resolve("stream.sock").toString();
    try (IpcHost streamHost = IpcHost.start(path, List.of(stream)); RawPeer peer = new RawPeer(path)) {
      peer.send(IPCFrame.newBuilder().setRequestId(1)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(1).setMethodId(1)).build());
      MethodCall call = called.get(10, TimeUnit.SECONDS);
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      streamHost.execute(() -> { // the loop is busy while another thread streams replies
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      ByteString chunk = ByteString.copyFrom(new byte[64 * 1024]);
      long maxUnsent = 0;
      for (int i = 0; i < 200; i++) { // 12.8 MiB, three times the bound
        call.replyMore(chunk);
        maxUnsent = Math.max(maxUnsent, call.unsentReplyBytes());
      }
      release.countDown();
      assertTrue(maxUnsent <= IpcHost.MAX_SEND_BUFFER_BYTES, "held for the peer: " + maxUnsent);
      waitFor(() -> streamHost.stats().sendOverflows() == 1 && streamHost.stats().connections() == 0);
    }
  }

  static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met in 20 s");
      }
      Thread.sleep(2);
    }
  }

  @Test
  void definitionFromDescriptorKeepsProtoOrder() throws Exception {
    com.google.protobuf.DescriptorProtos.FileDescriptorProto file =
        com.google.protobuf.DescriptorProtos.FileDescriptorProto.newBuilder()
            .setName("t.proto").setPackage("t")
            .addMessageType(com.google.protobuf.DescriptorProtos.DescriptorProto.newBuilder().setName("M"))
            .addService(com.google.protobuf.DescriptorProtos.ServiceDescriptorProto.newBuilder().setName("Port")
                .addMethod(method("Zeta")).addMethod(method("Alpha")).addMethod(method("Mid")))
            .build();
    var service = com.google.protobuf.Descriptors.FileDescriptor
        .buildFrom(file, new com.google.protobuf.Descriptors.FileDescriptor[0]).findServiceByName("Port");
    ServiceDefinition def = ServiceDefinition.fromDescriptor(service,
        Map.of("Alpha", call -> call.reply(utf8("alpha"))), new ServiceListener() {});
    assertEquals(List.of("Zeta", "Alpha", "Mid"), def.methods().stream().map(ServiceDefinition.Method::name).toList());
    assertEquals(2, def.methodId("Alpha"));
    assertEquals(0, def.methodId("Nope"));
    assertThrows(IllegalArgumentException.class, () -> ServiceDefinition.fromDescriptor(service,
        Map.of("Typo", MethodCall::fail), new ServiceListener() {}));
    String p = dir.resolve("desc.sock").toString();
    try (IpcHost _ = IpcHost.start(p, List.of(def)); IpcClient c = IpcClient.connect(p)) {
      BoundService port = await(c.bind("Port"));
      assertEquals(utf8("alpha"), await(port.invoke("Alpha", ByteString.EMPTY)).bytes());
      assertEquals(IpcException.Kind.REQUEST_FAILED, failure(port.invoke("Zeta", ByteString.EMPTY)).kind());
    }
  }

  private static com.google.protobuf.DescriptorProtos.MethodDescriptorProto method(String name) {
    return com.google.protobuf.DescriptorProtos.MethodDescriptorProto.newBuilder()
        .setName(name).setInputType(".t.M").setOutputType(".t.M").build();
  }

  @Test
  void peerCredentialsAndConnectFailures() throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = await(client.bind("Greeter"));
      assertEquals(utf8(ProcessHandle.current().pid() + " " + currentUid() + " true"),
          await(greeter.invoke("Whoami", ByteString.EMPTY)).bytes());
    }
    IOException e = assertThrows(IOException.class, () -> IpcClient.connect(dir.resolve("none.sock").toString()));
    assertTrue(e.getMessage().contains("connect"), e.getMessage());
  }
}
