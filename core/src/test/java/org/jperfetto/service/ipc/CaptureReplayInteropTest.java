package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.InitializeConnectionResponse;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.jperfetto.testing.Fixtures;

/**
 * Replays what real upstream clients sent (test-fixtures/interop) into jtraced over sockets: the
 * producer's BindService, InitializeConnection, GetAsyncCommand and RegisterDataSource("track_event"),
 * then the perfetto CLI's BindService and EnableTracing. jtraced must answer them as the captured
 * traced did, in kind: the same method table, successful replies, and on the command stream
 * setup_tracing with an fd, setup_data_source and start_data_source.
 */
@Timeout(60)
class CaptureReplayInteropTest {
  @TempDir Path dir;

  static List<Path> sessions() throws IOException {
    Path interop = Fixtures.interop();
    try (Stream<Path> s = Files.list(interop)) {
      List<Path> out = s.filter(p -> Files.exists(p.resolve("producer.ipc.fd4.send.bin"))
          && Files.exists(p.resolve("perfetto_cli.ipc.fd6.send.bin"))).sorted().toList();
      assertFalse(out.isEmpty(), "no producer+cli captures under " + interop);
      return out;
    }
  }

  /** The length-prefixed frames of a captured stream, as raw bytes (prefix included). */
  static List<byte[]> rawFrames(Path file) throws IOException {
    byte[] stream = Files.readAllBytes(file);
    ByteBuffer buf = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    List<byte[]> out = new ArrayList<>();
    while (buf.remaining() >= 4) {
      int start = buf.position();
      int size = buf.getInt();
      byte[] frame = new byte[4 + size];
      System.arraycopy(stream, start, frame, 0, frame.length);
      out.add(frame);
      buf.position(start + 4 + size);
    }
    return out;
  }

  static List<IPCFrame> parsed(List<byte[]> raw) throws IOException {
    List<IPCFrame> out = new ArrayList<>();
    for (byte[] f : raw) {
      out.add(IPCFrame.parseFrom(ByteBuffer.wrap(f, 4, f.length - 4)));
    }
    return out;
  }

  @ParameterizedTest
  @MethodSource("sessions")
  void realClientsAreAnsweredLikeTracedAnsweredThem(Path session) throws Exception {
    List<byte[]> producerSent = rawFrames(session.resolve("producer.ipc.fd4.send.bin"));
    List<IPCFrame> tracedSent = parsed(rawFrames(session.resolve("traced.ipc.fd8.send.bin")));
    List<byte[]> cliSent = rawFrames(session.resolve("perfetto_cli.ipc.fd6.send.bin"));
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(p, c));
        Peer producer = new Peer(p);
        Peer cli = new Peer(c)) {
      // The producer's requests up to and including RegisterDataSource (method 2).
      List<IPCFrame> requests = new ArrayList<>();
      for (byte[] raw : producerSent) {
        IPCFrame f = IPCFrame.parseFrom(ByteBuffer.wrap(raw, 4, raw.length - 4));
        producer.send(raw);
        requests.add(f);
        if (f.hasMsgInvokeMethod() && f.getMsgInvokeMethod().getMethodId() == 2) {
          break;
        }
      }
      IPCFrame bindReply = producer.next();
      assertEquals(tracedSent.get(0).getMsgBindServiceReply(), bindReply.getMsgBindServiceReply(),
          "the same ProducerPort method table as traced");
      long getAsyncId = requests.stream().filter(f -> f.hasMsgInvokeMethod()
          && f.getMsgInvokeMethod().getMethodId() == 5).findFirst().orElseThrow().getRequestId();
      int finalReplies = 0;
      int invokes = (int) requests.stream().filter(IPCFrame::hasMsgInvokeMethod).count();
      while (finalReplies < invokes - 1) { // all but the GetAsyncCommand stream
        IPCFrame r = producer.next();
        assertTrue(r.getMsgInvokeMethodReply().getSuccess(), r.toString());
        if (r.getRequestId() != getAsyncId) {
          finalReplies++;
        }
        if (requests.stream().anyMatch(q -> q.getRequestId() == r.getRequestId()
            && q.getMsgInvokeMethod().getMethodId() == 1)) {
          InitializeConnectionResponse init =
              InitializeConnectionResponse.parseFrom(r.getMsgInvokeMethodReply().getReplyProto());
          assertTrue(init.getDirectSmbPatchingSupported());
          assertFalse(init.getUsingShmemProvidedByProducer());
        }
      }
      SessionIT.waitFor(() -> host.connectedProducers() == 1);

      // The CLI binds ConsumerPort and enables tracing with the captured session config.
      IPCFrame enable = null;
      for (byte[] raw : cliSent) {
        IPCFrame f = IPCFrame.parseFrom(ByteBuffer.wrap(raw, 4, raw.length - 4));
        cli.send(raw);
        if (f.hasMsgInvokeMethod()) {
          enable = f;
          break;
        }
      }
      assertTrue(cli.next().getMsgBindServiceReply().getSuccess());
      assertTrue(EnableTracingRequest.parseFrom(enable.getMsgInvokeMethod().getArgsProto())
          .getTraceConfig().getDataSourcesList().stream()
          .anyMatch(ds -> ds.getConfig().getName().equals("track_event")));

      // jtraced's command stream to the producer, in kind as traced's.
      List<GetAsyncCommandResponse.CmdCase> expected = new ArrayList<>();
      for (IPCFrame f : tracedSent) {
        if (f.getRequestId() == getAsyncId && f.hasMsgInvokeMethodReply()) {
          expected.add(GetAsyncCommandResponse.parseFrom(f.getMsgInvokeMethodReply().getReplyProto()).getCmdCase());
        }
      }
      List<GetAsyncCommandResponse.CmdCase> got = new ArrayList<>();
      int smbFds = 0;
      while (got.size() < 3) {
        IPCFrame r = producer.next();
        assertEquals(getAsyncId, r.getRequestId());
        assertTrue(r.getMsgInvokeMethodReply().getHasMore());
        GetAsyncCommandResponse cmd = GetAsyncCommandResponse.parseFrom(r.getMsgInvokeMethodReply().getReplyProto());
        got.add(cmd.getCmdCase());
        int fd = producer.lastFd;
        if (cmd.hasSetupTracing()) {
          assertTrue(fd >= 0, "setup_tracing carries the SMB fd");
          assertEquals(256 * 1024, MemFd.size(fd));
          assertTrue(MemFd.hasSeals(fd, MemfdSharedMemory.REQUIRED_SEALS));
          assertEquals(4, cmd.getSetupTracing().getSharedBufferPageSizeKb());
          smbFds++;
        }
        Fds.closeQuietly(fd);
      }
      assertEquals(expected.subList(0, 3), got);
      assertEquals(List.of(GetAsyncCommandResponse.CmdCase.SETUP_TRACING,
          GetAsyncCommandResponse.CmdCase.SETUP_DATA_SOURCE, GetAsyncCommandResponse.CmdCase.START_DATA_SOURCE), got);
      assertEquals(1, smbFds);
    }
  }

  /** A raw client: sends captured bytes, reads whole frames and the fd that came with each. */
  static final class Peer implements AutoCloseable {
    private final UnixSocket socket;
    private final Arena arena = Arena.ofConfined();
    private final FrameReader reader = new FrameReader(Fds::closeQuietly);
    private final ArrayDeque<IPCFrame> frames = new ArrayDeque<>();
    private final ArrayDeque<Integer> fds = new ArrayDeque<>();
    int lastFd = -1;

    Peer(String path) throws IOException {
      socket = UnixSocket.connect(path);
    }

    void send(byte[] raw) throws IOException {
      MemorySegment seg = arena.allocate(raw.length);
      MemorySegment.copy(raw, 0, seg, ValueLayout.JAVA_BYTE, 0, raw.length);
      for (long sent = 0; sent < raw.length; ) {
        sent += socket.send(seg, sent, raw.length - sent, -1);
      }
    }

    IPCFrame next() throws IOException {
      int[] fd = {-1};
      while (frames.isEmpty()) {
        long n = socket.receive(reader.receiveBuffer(), reader.receiveOffset(), reader.receiveSpace(), fd);
        if (n == 0) {
          throw new IOException("jtraced closed the connection");
        }
        if (!reader.endReceive((int) n, fd[0], (f, d) -> {
          frames.add(f);
          fds.add(d);
        })) {
          throw new IOException(reader.failure().message());
        }
      }
      lastFd = fds.poll();
      return frames.poll();
    }

    @Override
    public void close() {
      socket.close();
      reader.close();
      arena.close();
      fds.forEach(Fds::closeQuietly);
    }
  }
}
