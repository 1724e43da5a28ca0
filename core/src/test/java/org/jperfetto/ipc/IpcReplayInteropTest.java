package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.ipc.wire.Frames;
import org.jperfetto.os.Fds;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.IPCFrame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.jperfetto.testing.Fixtures;

/**
 * Replays byte streams recorded between real Perfetto binaries (test-fixtures/interop) through our
 * frame reader, into an {@link IpcHost} (as the client side) and into an {@link IpcClient} (as
 * traced's side).
 */
@Timeout(60)
class IpcReplayInteropTest {
  static final List<String> PRODUCER_PORT = List.of("InitializeConnection", "RegisterDataSource",
      "UnregisterDataSource", "CommitData", "GetAsyncCommand", "RegisterTraceWriter",
      "UnregisterTraceWriter", "NotifyDataSourceStarted", "NotifyDataSourceStopped",
      "ActivateTriggers", "Sync", "UpdateDataSource");
  static final List<String> CONSUMER_PORT = List.of("EnableTracing", "DisableTracing", "ReadBuffers",
      "FreeBuffers", "Flush", "StartTracing", "ChangeTraceConfig", "Detach", "Attach",
      "GetTraceStats", "ObserveEvents", "QueryServiceState", "QueryCapabilities",
      "SaveTraceForBugreport", "CloneSession");

  static final Path INTEROP = Fixtures.interop();

  @TempDir
  Path dir;

  /** One client connection recorded from the client's side. */
  record Capture(String folder, String process, int fd, String service) {
    Path file(String suffix) {
      return INTEROP.resolve(folder).resolve(process + ".ipc" + suffix);
    }

    List<String> methods() {
      return service.equals("ProducerPort") ? PRODUCER_PORT : CONSUMER_PORT;
    }

    @Override
    public String toString() {
      return folder + "/" + process + " fd" + fd;
    }
  }

  static Stream<Capture> captures() {
    List<Capture> all = new ArrayList<>();
    for (String folder : List.of("v14producer_v58traced", "v58producer_v58traced")) {
      all.add(new Capture(folder, "producer", 4, "ProducerPort"));
      all.add(new Capture(folder, "perfetto_cli", 6, "ConsumerPort"));
    }
    for (String folder : List.of("sdkconsumer_v14_v58traced", "sdkconsumer_v58_v58traced")) {
      all.add(new Capture(folder, "sdk_consumer", 4, "ProducerPort"));
      all.add(new Capture(folder, "sdk_consumer", 5, "ConsumerPort"));
    }
    return all.stream();
  }

  record Decoded(List<IPCFrame> frames, List<Integer> fds) {}

  static Decoded decode(byte[] bytes) {
    List<IPCFrame> frames = new ArrayList<>();
    List<Integer> fds = new ArrayList<>();
    try (FrameReader reader = new FrameReader(fd -> { })) {
      assertTrue(reader.feed(bytes, 0, bytes.length, -1, (f, fd) -> {
        frames.add(f);
        fds.add(fd);
      }), () -> String.valueOf(reader.failure()));
      assertEquals(0, reader.bufferedBytes(), "stream ends on a frame boundary");
    }
    return new Decoded(frames, fds);
  }

  static byte[] read(Path file) throws IOException {
    return Files.readAllBytes(file);
  }

  @Test
  void everyCapturedStreamDecodesWholeAndByteByByte() throws IOException {
    List<Path> bins;
    try (Stream<Path> files = Files.walk(INTEROP)) {
      bins = files.filter(p -> p.toString().endsWith(".bin") && p.toString().contains(".ipc.")).sorted().toList();
    }
    assertEquals(24, bins.size(), bins.toString());
    int total = 0;
    for (Path bin : bins) {
      byte[] bytes = read(bin);
      List<IPCFrame> whole = decode(bytes).frames();
      List<IPCFrame> single = new ArrayList<>();
      try (FrameReader reader = new FrameReader(fd -> { })) {
        for (int i = 0; i < bytes.length; i++) {
          assertTrue(reader.feed(bytes, i, 1, -1, (f, fd) -> single.add(f)));
        }
      }
      assertEquals(whole, single, bin.toString());
      assertFalse(whole.isEmpty(), bin.toString());
      for (IPCFrame frame : whole) {
        assertTrue(frame.getRequestId() > 0, bin + ": " + frame);
        assertTrue(frame.getMsgCase() != IPCFrame.MsgCase.MSG_NOT_SET, bin + ": " + frame);
        assertTrue(frame.getUnknownFields().asMap().isEmpty(), bin + ": unknown fields in " + frame);
      }
      total += whole.size();
    }
    assertTrue(total > 100, "frames: " + total);
  }

  /** The table real traced announced to the client in this capture: id -> name. */
  static Map<Integer, String> announcedTable(Capture capture) throws IOException {
    IPCFrame.BindServiceReply reply = decode(read(capture.file(".fd" + capture.fd() + ".recv.bin"))).frames()
        .stream().filter(IPCFrame::hasMsgBindServiceReply).findFirst().orElseThrow().getMsgBindServiceReply();
    assertTrue(reply.getSuccess());
    Map<Integer, String> table = new LinkedHashMap<>();
    reply.getMethodsList().forEach(m -> table.put(m.getId(), m.getName()));
    return table;
  }

  @ParameterizedTest
  @MethodSource("captures")
  void realTracedAnnouncesTheMethodTableWeServe(Capture capture) throws IOException {
    Map<Integer, String> table = announcedTable(capture);
    List<String> names = capture.methods();
    assertEquals(names.size(), table.size());
    for (int i = 0; i < names.size(); i++) {
      assertEquals(names.get(i), table.get(i + 1), "method id " + (i + 1));
    }
  }

  /** Client-to-service frames replayed into our host: each binds and dispatches by name as in real traced. */
  @ParameterizedTest
  @MethodSource("captures")
  void capturedRequestsDispatchToTheSameMethodNamesInOurHost(Capture capture) throws Exception {
    List<IPCFrame> sent = decode(read(capture.file(".fd" + capture.fd() + ".send.bin"))).frames();
    Map<Integer, String> table = announcedTable(capture);
    List<String> expected = new ArrayList<>();
    for (IPCFrame frame : sent) {
      if (frame.hasMsgBindService()) {
        assertEquals(capture.service(), frame.getMsgBindService().getServiceName());
      } else {
        assertTrue(frame.hasMsgInvokeMethod(), frame.toString());
        assertEquals(1, frame.getMsgInvokeMethod().getServiceId());
        expected.add(table.get(frame.getMsgInvokeMethod().getMethodId()));
      }
    }
    List<String> dispatched = new CopyOnWriteArrayList<>();
    ServiceDefinition.Builder builder = ServiceDefinition.builder(capture.service());
    for (String name : capture.methods()) {
      builder.method(name, call -> {
        dispatched.add(call.methodName());
        if (!call.methodName().equals("GetAsyncCommand")) {
          call.reply(ByteString.EMPTY);
        }
      });
    }
    String path = dir.resolve("host.sock").toString();
    IPCFrame realBindReply = decode(read(capture.file(".fd" + capture.fd() + ".recv.bin"))).frames().stream()
        .filter(IPCFrame::hasMsgBindServiceReply).findFirst().orElseThrow();
    try (IpcHost host = IpcHost.start(path, List.of(builder.build()));
         RawPeer peer = new RawPeer(path)) {
      peer.sendBytes(read(capture.file(".fd" + capture.fd() + ".send.bin")), -1);
      IPCFrame ourBindReply = peer.next();
      assertEquals(realBindReply, ourBindReply, "our BindServiceReply equals real traced's");
      IpcIT.waitFor(() -> dispatched.size() >= expected.size());
      assertEquals(expected, dispatched);
      assertEquals(0, host.stats().rejectedRequests());
    }
    if (capture.service().equals("ProducerPort")) {
      assertEquals(List.of("InitializeConnection", "GetAsyncCommand", "RegisterDataSource"), expected.subList(0, 3));
    } else {
      assertTrue(expected.contains("EnableTracing") || expected.contains("ReadBuffers"), expected.toString());
    }
  }

  /** One sendmsg/recvmsg record of a client, from its .jsonl. */
  record Record(boolean sent, byte[] bytes, boolean withFd) {}

  private static final Pattern RECORD = Pattern.compile(
      "\"fd\": (\\d+), \"dir\": \"(send|recv)\", \"len\": \\d+, \"hex\": \"([0-9a-f]*)\","
          + " \"scm_rights\": (null|\\[[^]]*])");

  static List<Record> records(Capture capture) throws IOException {
    List<Record> records = new ArrayList<>();
    for (String line : Files.readAllLines(capture.file(".jsonl"))) {
      Matcher m = RECORD.matcher(line);
      assertTrue(m.find(), line);
      if (Integer.parseInt(m.group(1)) == capture.fd()) {
        records.add(new Record(m.group(2).equals("send"), HexFormat.of().parseHex(m.group(3)),
            !m.group(4).equals("null")));
      }
    }
    return records;
  }

  /**
   * Real traced's replies replayed into our client: the client binds and calls the same methods by
   * name, with the captured arguments, while a scripted host checks each request equals the
   * captured one and answers with traced's recorded bytes (and an fd where traced sent one).
   */
  @ParameterizedTest
  @MethodSource("captures")
  void ourClientDecodesRealTracedReplies(Capture capture) throws Exception {
    List<Record> records = records(capture);
    byte[] clientStream = concat(records.stream().filter(Record::sent).toList());
    byte[] serverStream = concat(records.stream().filter(r -> !r.sent()).toList());
    List<IPCFrame> requests = decode(clientStream).frames();
    List<IPCFrame> replies = decode(serverStream).frames();
    Map<Integer, String> table = announcedTable(capture);

    String path = dir.resolve("traced.sock").toString();
    try (UnixSocket listener = UnixSocket.listen(path, 1);
         UnixSocket fdSource = UnixSocket.listen("@jperfetto-interop-" + System.nanoTime(), 1)) {
      CompletableFuture<Void> scripted = CompletableFuture.runAsync(() -> serve(listener, records, fdSource));
      try (IpcClient client = IpcClient.connect(path)) {
        BoundService service = client.bind(capture.service()).get(20, TimeUnit.SECONDS);
        assertEquals(table.size(), service.methodIds().size());
        table.forEach((id, name) -> assertEquals(id, service.methodIds().get(name)));

        Map<Long, CompletableFuture<Reply>> futures = new LinkedHashMap<>();
        Map<Long, List<Reply>> streamed = new LinkedHashMap<>();
        for (IPCFrame request : requests.subList(1, requests.size())) {
          IPCFrame.InvokeMethod invoke = request.getMsgInvokeMethod();
          String name = table.get(invoke.getMethodId());
          long id = request.getRequestId();
          boolean streaming = replies.stream().anyMatch(r -> r.getRequestId() == id
              && r.getMsgInvokeMethodReply().getHasMore());
          if (invoke.getDropReply()) {
            service.invokeNoReply(name, invoke.getArgsProto(), -1);
          } else if (streaming) {
            List<Reply> got = new CopyOnWriteArrayList<>();
            streamed.put(id, got);
            CompletableFuture<Reply> done = new CompletableFuture<>();
            service.invokeStreaming(name, invoke.getArgsProto(), -1, got::add)
                .whenComplete((v, e) -> {
                  if (e != null) {
                    done.completeExceptionally(e);
                  } else {
                    done.complete(got.getLast());
                  }
                });
            futures.put(id, done);
          } else {
            futures.put(id, service.invoke(name, invoke.getArgsProto()));
          }
        }
        scripted.get(30, TimeUnit.SECONDS); // every request matched; traced's bytes all sent; closed
        int fdsReceived = 0;
        for (Map.Entry<Long, CompletableFuture<Reply>> entry : futures.entrySet()) {
          long id = entry.getKey();
          List<IPCFrame.InvokeMethodReply> expected = replies.stream().filter(r -> r.getRequestId() == id)
              .map(IPCFrame::getMsgInvokeMethodReply).toList();
          boolean ended = !expected.isEmpty() && !expected.getLast().getHasMore();
          if (ended) {
            Reply last = entry.getValue().get(20, TimeUnit.SECONDS);
            assertEquals(expected.getLast().getReplyProto(), last.bytes(), "request_id=" + id);
          } else {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> entry.getValue().get(20, TimeUnit.SECONDS));
            IpcException cause = assertInstanceOf(IpcException.class, e.getCause());
            assertEquals(IpcException.Kind.CONNECTION_LOST, cause.kind());
          }
          List<Reply> got = streamed.get(id);
          if (got != null) {
            assertEquals(expected.size(), got.size(), "replies to request_id=" + id);
            for (int i = 0; i < got.size(); i++) {
              assertEquals(expected.get(i).getReplyProto(), got.get(i).bytes());
              assertEquals(expected.get(i).getHasMore(), got.get(i).hasMore());
              if (got.get(i).fd() >= 0) {
                fdsReceived++;
                assertEquals(IpcIT.fdLink(fdSource.fd()), IpcIT.fdLink(got.get(i).fd()));
                Fds.close(got.get(i).fd());
              }
            }
          }
        }
        long fdsInCapture = records.stream().filter(r -> !r.sent() && r.withFd()).count();
        assertEquals(fdsInCapture, fdsReceived, "fds delivered with the reply traced attached them to");
        IpcIT.waitFor(() -> !client.isConnected());
      }
    }
  }

  private static byte[] concat(List<Record> records) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    records.forEach(r -> out.writeBytes(r.bytes()));
    return out.toByteArray();
  }

  /**
   * Plays traced: for each record, either reads the client's frames the record holds and checks
   * they equal the captured ones, or sends traced's bytes; an fd goes with the last frame starting
   * in the record, as the kernel delivered it. Then closes the connection.
   */
  private static void serve(UnixSocket listener, List<Record> records, UnixSocket fdSource) {
    try (RawPeer raw = new RawPeer(listener.accept())) {
      FrameReader expectedClient = new FrameReader(fd -> { });
      List<IPCFrame> expectedFrames = new ArrayList<>();
      for (Record record : records) {
        if (record.sent()) {
          expectedClient.feed(record.bytes(), 0, record.bytes().length, -1, (f, fd) -> expectedFrames.add(f));
          while (!expectedFrames.isEmpty()) {
            IPCFrame got = raw.next();
            assertNotNull(got, "client hung up early");
            assertEquals(expectedFrames.removeFirst(), got);
          }
        } else if (!record.withFd()) {
          raw.sendBytes(record.bytes(), -1);
        } else {
          int split = lastFrameStart(record.bytes());
          raw.sendBytes(java.util.Arrays.copyOf(record.bytes(), split), -1);
          int fd = Fds.dup(fdSource.fd());
          raw.sendBytes(java.util.Arrays.copyOfRange(record.bytes(), split, record.bytes().length), fd);
          Fds.close(fd);
        }
      }
      expectedClient.close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Offset of the last frame that starts in {@code bytes} (a record begins on a frame boundary). */
  private static int lastFrameStart(byte[] bytes) {
    int pos = 0;
    int last = 0;
    while (pos + Frames.HEADER_SIZE <= bytes.length) {
      last = pos;
      int len = (bytes[pos] & 0xff) | (bytes[pos + 1] & 0xff) << 8 | (bytes[pos + 2] & 0xff) << 16
          | (bytes[pos + 3] & 0xff) << 24;
      pos += Frames.HEADER_SIZE + len;
    }
    return last;
  }
}
