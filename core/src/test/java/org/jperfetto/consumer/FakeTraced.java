package org.jperfetto.consumer;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.MethodHandler;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.ipc.ServiceListener;
import org.jperfetto.os.Fds;
import org.jperfetto.protos.AttachRequest;
import org.jperfetto.protos.AttachResponse;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.ConsumerPortOuterClass;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.DetachRequest;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.EnableTracingResponse;
import org.jperfetto.protos.FlushRequest;
import org.jperfetto.protos.GetTraceStatsResponse;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsResponse;
import org.jperfetto.protos.QueryCapabilitiesResponse;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.SaveTraceForBugreportResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceCapabilities;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.protos.TrackEventDescriptor;
import org.jperfetto.protos.TrackEventCategory;

/**
 * A small stand-in for traced's ConsumerPort, for tests: one session per connection; EnableTracing
 * answers only when the session ends (its duration elapsed, DisableTracing, or an error);
 * ReadBuffers streams the scripted packets cut into slices of at most {@link #sliceBytes} and
 * {@link #slicesPerReply} slices per reply; a write_into_file session gets its packets written into
 * the fd it came with; Detach/Attach keep a session across connections; QueryServiceState answers
 * in two parts. Methods can be left out to play an older service.
 */
public final class FakeTraced implements AutoCloseable {
  /** A recorded call: method name and the request bytes. */
  public record Call(String method, ByteString args) {}

  private final class Session {
    final TraceConfig config;
    MethodCall enableCall;
    final List<MethodCall> notifyCalls = new ArrayList<>();
    int outputFd = -1;
    boolean ended;
    java.util.concurrent.ScheduledFuture<?> timer;

    Session(TraceConfig config) {
      this.config = config;
    }
  }

  private final IpcHost host;
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "fake-traced-timer");
    t.setDaemon(true);
    return t;
  });
  private final Map<Long, Session> sessions = new HashMap<>();
  private final Map<String, Session> detached = new HashMap<>();
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private volatile List<byte[]> packets = defaultPackets(10);
  private volatile String enableError = "";
  private volatile boolean flushFails;
  /** Largest slice ReadBuffers sends. */
  public volatile int sliceBytes = 7;
  /** Slices per ReadBuffers reply. */
  public volatile int slicesPerReply = 3;

  private FakeTraced(String socketPath, Set<String> omitted) throws IOException {
    Map<String, MethodHandler> handlers = new HashMap<>();
    handlers.put("EnableTracing", this::enableTracing);
    handlers.put("DisableTracing", call -> {
      record(call);
      endSession(call.client().clientId(), "");
      call.reply(ByteString.EMPTY);
    });
    handlers.put("StartTracing", call -> replyEmpty(call));
    handlers.put("ChangeTraceConfig", call -> replyEmpty(call));
    handlers.put("ReadBuffers", this::readBuffers);
    handlers.put("FreeBuffers", call -> replyEmpty(call));
    handlers.put("Flush", this::flush);
    handlers.put("Detach", this::detach);
    handlers.put("Attach", this::attach);
    handlers.put("GetTraceStats", this::traceStats);
    handlers.put("ObserveEvents", this::observeEvents);
    handlers.put("QueryServiceState", this::queryServiceState);
    handlers.put("QueryCapabilities", call -> {
      record(call);
      call.reply(QueryCapabilitiesResponse.newBuilder().setCapabilities(
          TracingServiceCapabilities.newBuilder().setHasQueryCapabilities(true)).build());
    });
    handlers.put("SaveTraceForBugreport", call -> {
      record(call);
      call.reply(SaveTraceForBugreportResponse.newBuilder().setSuccess(false).setMsg("no session").build());
    });
    handlers.put("CloneSession", call -> {
      record(call);
      CloneSessionRequest request = CloneSessionRequest.parseFrom(call.args());
      call.reply(CloneSessionResponse.newBuilder().setSuccess(request.getSessionId() == 7)
          .setError(request.getSessionId() == 7 ? "" : "no session " + request.getSessionId()).build());
    });
    ServiceDefinition.Builder builder = ServiceDefinition.builder("ConsumerPort").listener(new ServiceListener() {
      @Override
      public void onClientDisconnected(ClientInfo client) {
        dropSession(client.clientId());
      }
    });
    for (var method : ConsumerPortOuterClass.getDescriptor().findServiceByName("ConsumerPort").getMethods()) {
      if (!omitted.contains(method.getName())) {
        builder.method(method.getName(), handlers.get(method.getName()));
      }
    }
    host = IpcHost.start(socketPath, List.of(builder.build()));
  }

  /** A fake listening on {@code dir}/consumer.sock. */
  public static FakeTraced startIn(Path dir) throws IOException {
    return start(dir.resolve("consumer.sock").toString());
  }

  public static FakeTraced start(String socketPath) throws IOException {
    return new FakeTraced(socketPath, Set.of());
  }

  /** A service that does not know {@code omitted} (an older service). */
  public static FakeTraced startWithout(String socketPath, Set<String> omitted) throws IOException {
    return new FakeTraced(socketPath, omitted);
  }

  /** {@code n} small TracePackets with timestamps 1000..1000+n-1, sizes varying. */
  public static List<byte[]> defaultPackets(int n) {
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(TracePacket.newBuilder().setTimestamp(1000 + i).setTrustedPacketSequenceId(1)
          .setSequenceFlags(i % 3).build().toByteArray());
    }
    return out;
  }

  public void setPackets(List<byte[]> scripted) {
    packets = List.copyOf(scripted);
  }

  public List<byte[]> packets() {
    return packets;
  }

  /** The next sessions end at once with {@code error} (empty for none). */
  public void setEnableError(String error) {
    enableError = error;
  }

  public void setFlushFails(boolean fails) {
    flushFails = fails;
  }

  public List<Call> calls() {
    return List.copyOf(calls);
  }

  public List<String> methodsCalled() {
    return calls.stream().map(Call::method).toList();
  }

  /** The config of the last EnableTracing with a config. */
  public TraceConfig lastConfig() throws InvalidProtocolBufferException {
    for (int i = calls.size() - 1; i >= 0; i--) {
      if (calls.get(i).method().equals("EnableTracing")) {
        EnableTracingRequest r = EnableTracingRequest.parseFrom(calls.get(i).args());
        if (r.hasTraceConfig()) {
          return r.getTraceConfig();
        }
      }
    }
    return null;
  }

  public synchronized int activeSessions() {
    return (int) sessions.values().stream().filter(s -> !s.ended).count() + detached.size();
  }

  public String address() {
    return host.address();
  }

  private void record(MethodCall call) {
    calls.add(new Call(call.methodName(), call.args()));
  }

  private void replyEmpty(MethodCall call) {
    record(call);
    call.reply(ByteString.EMPTY);
  }

  private synchronized void enableTracing(MethodCall call) throws IOException {
    record(call);
    EnableTracingRequest request = EnableTracingRequest.parseFrom(call.args());
    long client = call.client().clientId();
    if (request.getAttachNotificationOnly()) {
      Session s = sessions.get(client);
      if (s == null || s.ended) {
        call.reply(EnableTracingResponse.newBuilder().setDisabled(true)
            .setError("no session to be notified about").build());
      } else {
        s.notifyCalls.add(call);
      }
      return;
    }
    Session existing = sessions.get(client);
    if (existing != null && !existing.ended) {
      call.reply(EnableTracingResponse.newBuilder().setDisabled(true)
          .setError("a session is already active for this consumer").build());
      return;
    }
    Session s = new Session(request.getTraceConfig());
    s.enableCall = call;
    s.outputFd = call.takeReceivedFd();
    sessions.put(client, s);
    if (!enableError.isEmpty()) {
      endSession(client, enableError);
      return;
    }
    if (s.config.getDurationMs() > 0) {
      s.timer = timers.schedule(() -> endSession(s, ""), s.config.getDurationMs(), TimeUnit.MILLISECONDS);
    }
  }

  private synchronized void endSession(long client, String error) {
    Session s = sessions.get(client);
    if (s != null) {
      endSession(s, error);
    }
  }

  private synchronized void endSession(Session s, String error) {
    if (s.ended) {
      return;
    }
    s.ended = true;
    if (s.timer != null) {
      s.timer.cancel(false);
    }
    if (s.outputFd >= 0) {
      if (error.isEmpty()) {
        writeInto(s.outputFd);
      }
      Fds.closeQuietly(s.outputFd);
      s.outputFd = -1;
    }
    EnableTracingResponse done = EnableTracingResponse.newBuilder().setDisabled(true).setError(error).build();
    if (s.enableCall != null && !s.enableCall.isDone()) {
      s.enableCall.reply(done);
    }
    for (MethodCall c : s.notifyCalls) {
      if (!c.isDone()) {
        c.reply(done);
      }
    }
  }

  private void writeInto(int fd) {
    try (OutputStream out = Files.newOutputStream(Path.of("/proc/self/fd/" + fd),
        StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      TraceFileWriter writer = new TraceFileWriter(out);
      for (byte[] p : packets) {
        writer.onPacket(List.of(ByteString.copyFrom(p)), p.length);
      }
      writer.close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private synchronized void dropSession(long client) {
    Session s = sessions.remove(client);
    if (s != null && !s.ended && !detached.containsValue(s)) {
      s.ended = true;
      if (s.timer != null) {
        s.timer.cancel(false);
      }
      if (s.outputFd >= 0) {
        Fds.closeQuietly(s.outputFd);
      }
    }
  }

  private void readBuffers(MethodCall call) {
    record(call);
    List<ReadBuffersResponse.Slice> slices = new ArrayList<>();
    int max = Math.max(1, sliceBytes);
    for (byte[] p : packets) {
      int off = 0;
      do {
        int n = Math.min(max, p.length - off);
        slices.add(ReadBuffersResponse.Slice.newBuilder().setData(ByteString.copyFrom(p, off, n))
            .setLastSliceForPacket(off + n == p.length).build());
        off += n;
      } while (off < p.length);
    }
    int per = Math.max(1, slicesPerReply);
    for (int i = 0; i < slices.size(); i += per) {
      call.replyMore(ReadBuffersResponse.newBuilder()
          .addAllSlices(slices.subList(i, Math.min(slices.size(), i + per))).build());
    }
    call.reply(ReadBuffersResponse.getDefaultInstance());
  }

  private void flush(MethodCall call) throws IOException {
    record(call);
    FlushRequest.parseFrom(call.args());
    if (flushFails) {
      call.fail();
    } else {
      call.reply(ByteString.EMPTY);
    }
  }

  private synchronized void detach(MethodCall call) throws IOException {
    record(call);
    String key = DetachRequest.parseFrom(call.args()).getKey();
    Session s = sessions.remove(call.client().clientId());
    if (s == null || s.ended || key.isEmpty() || detached.containsKey(key)) {
      call.fail();
      return;
    }
    s.enableCall = null; // the detaching consumer goes away without its notification
    detached.put(key, s);
    call.reply(ByteString.EMPTY);
  }

  private synchronized void attach(MethodCall call) throws IOException {
    record(call);
    String key = AttachRequest.parseFrom(call.args()).getKey();
    Session s = detached.remove(key);
    if (s == null) {
      call.fail();
      return;
    }
    sessions.put(call.client().clientId(), s);
    call.reply(AttachResponse.newBuilder().setTraceConfig(s.config).build());
  }

  private void traceStats(MethodCall call) {
    record(call);
    long bytes = packets.stream().mapToLong(p -> p.length).sum();
    call.reply(GetTraceStatsResponse.newBuilder().setTraceStats(TraceStats.newBuilder()
        .addBufferStats(TraceStats.BufferStats.newBuilder().setBufferSize(4096 * 1024)
            .setBytesWritten(bytes))).build());
  }

  private void observeEvents(MethodCall call) {
    record(call);
    call.replyMore(ObserveEventsResponse.newBuilder().setEvents(
        ObservableEvents.newBuilder().setAllDataSourcesStarted(true)).build());
    call.reply(ObserveEventsResponse.getDefaultInstance());
  }

  private void queryServiceState(MethodCall call) {
    record(call);
    TrackEventDescriptor categories = TrackEventDescriptor.newBuilder()
        .addAvailableCategories(TrackEventCategory.newBuilder().setName("app"))
        .addAvailableCategories(TrackEventCategory.newBuilder().setName("gc")).build();
    TracingServiceState first = TracingServiceState.newBuilder()
        .addProducers(TracingServiceState.Producer.newBuilder().setId(1).setName("demo_app")
            .setPid(4242).setUid(1000).setSdkVersion("jperfetto-test"))
        .addDataSources(TracingServiceState.DataSource.newBuilder().setProducerId(1)
            .setDsDescriptor(DataSourceDescriptor.newBuilder().setName("track_event")
                .setTrackEventDescriptor(categories)))
        .build();
    TracingServiceState second = TracingServiceState.newBuilder()
        .setTracingServiceVersion("fake-traced 1.0").setSupportsTracingSessions(true)
        .setNumSessions(1).setNumSessionsStarted(1)
        .addTracingSessions(TracingServiceState.TracingSession.newBuilder().setId(7).setConsumerUid(1000)
            .setState("STARTED").addBufferSizeKb(4096).setDurationMs(10000).setNumDataSources(1)
            .setUniqueSessionName("fake_session"))
        .build();
    call.replyMore(QueryServiceStateResponse.newBuilder().setServiceState(first).build());
    call.reply(QueryServiceStateResponse.newBuilder().setServiceState(second).build());
  }

  @Override
  public void close() {
    host.close();
    timers.shutdownNow();
  }
}
