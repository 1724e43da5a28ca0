package org.jperfetto.consumer;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.ipc.Reply;
import org.jperfetto.os.Fds;
import org.jperfetto.protos.AttachRequest;
import org.jperfetto.protos.AttachResponse;
import org.jperfetto.protos.ChangeTraceConfigRequest;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.DetachRequest;
import org.jperfetto.protos.DisableTracingRequest;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.EnableTracingResponse;
import org.jperfetto.protos.FlushRequest;
import org.jperfetto.protos.FreeBuffersRequest;
import org.jperfetto.protos.GetTraceStatsRequest;
import org.jperfetto.protos.GetTraceStatsResponse;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsRequest;
import org.jperfetto.protos.ObserveEventsResponse;
import org.jperfetto.protos.QueryCapabilitiesRequest;
import org.jperfetto.protos.QueryCapabilitiesResponse;
import org.jperfetto.protos.QueryServiceStateRequest;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.ReadBuffersRequest;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.SaveTraceForBugreportRequest;
import org.jperfetto.protos.SaveTraceForBugreportResponse;
import org.jperfetto.protos.StartTracingRequest;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceCapabilities;
import org.jperfetto.protos.TracingServiceState;

/**
 * A consumer of a Perfetto tracing service: one connection to its consumer socket with the
 * {@code ConsumerPort} service bound. It enables a session, starts, flushes and stops it, and
 * reads the trace back; it also detaches from and re-attaches to sessions, and queries the
 * service.
 *
 * <p>Every call is asynchronous: it returns a future that completes on the connection's I/O thread
 * (do not block inside dependent stages; use the {@code *Async} stages to move work off it). A
 * call fails with an {@link IpcException}: {@link IpcException.Kind#METHOD_NOT_FOUND} when the
 * service is too old to know the method, {@link IpcException.Kind#REQUEST_FAILED} when it refused
 * the request, {@link IpcException.Kind#CONNECTION_LOST} when the connection ended first. A reply
 * that does not decode fails the call with an {@link IOException}.
 *
 * <p>Like upstream's service, a service runs at most one session per consumer connection.
 */
public final class TracingConsumer implements AutoCloseable {
  /** The service this client binds. */
  public static final String SERVICE_NAME = "ConsumerPort";
  /** How long {@link #connect} waits for the service to answer BindService. */
  public static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

  private final IpcClient client;
  private final BoundService port;
  private final String socketPath;
  private final CompletableFuture<IOException> disconnected;

  private TracingConsumer(IpcClient client, BoundService port, String socketPath,
      CompletableFuture<IOException> disconnected) {
    this.client = client;
    this.port = port;
    this.socketPath = socketPath;
    this.disconnected = disconnected;
  }

  /** Connects to the service at {@link ConsumerSockets#defaultPath()}. */
  public static TracingConsumer connect() throws IOException {
    return connect(ConsumerSockets.defaultPath());
  }

  /**
   * Connects to the service at {@code socketPath} and binds ConsumerPort.
   *
   * @throws org.jperfetto.os.ErrnoException if nothing listens there (ENOENT, ECONNREFUSED)
   * @throws IpcException if the service does not expose ConsumerPort or does not answer in time
   */
  public static TracingConsumer connect(String socketPath) throws IOException {
    Objects.requireNonNull(socketPath, "socketPath");
    CompletableFuture<IOException> disconnected = new CompletableFuture<>();
    IpcClient client = IpcClient.connect(socketPath, disconnected::complete);
    try {
      BoundService port = client.bind(SERVICE_NAME)
          .get(BIND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return new TracingConsumer(client, port, socketPath, disconnected);
    } catch (ExecutionException e) {
      client.close();
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("binding " + SERVICE_NAME + " on " + socketPath + " failed", e.getCause());
    } catch (TimeoutException e) {
      client.close();
      throw new IpcException(IpcException.Kind.CONNECTION_LOST, "no answer to BindService("
          + SERVICE_NAME + ") from " + socketPath + " within " + BIND_TIMEOUT.toMillis() + " ms");
    } catch (InterruptedException e) {
      client.close();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while binding " + SERVICE_NAME + " on " + socketPath, e);
    }
  }

  /** The socket this consumer is connected to. */
  public String socketPath() {
    return socketPath;
  }

  /** True until the connection ends. */
  public boolean isConnected() {
    return client.isConnected();
  }

  /** Completes, with the cause, when the connection ends (service gone, protocol error, close). */
  public CompletableFuture<IOException> disconnected() {
    return disconnected;
  }

  /** True if the service announced {@code method} (e.g. "CloneSession") when it was bound. */
  public boolean supports(String method) {
    return port.hasMethod(method);
  }

  /**
   * Asks the service to start a session with {@code config}. Unless the config sets
   * {@code deferred_start}, tracing starts at once.
   */
  public TracingSession enableTracing(TraceConfig config) {
    return enable(config, EnableTracingRequest.newBuilder().setTraceConfig(config).build(), -1);
  }

  /**
   * As {@link #enableTracing(TraceConfig)}, for a {@code write_into_file} config without
   * {@code output_path}: the service writes the trace into {@code outputFd}. The fd is duplicated;
   * the caller keeps its own.
   */
  public TracingSession enableTracing(TraceConfig config, int outputFd) throws IOException {
    int dup = Fds.dup(outputFd);
    return enable(config, EnableTracingRequest.newBuilder().setTraceConfig(config).build(), dup);
  }

  private TracingSession enable(TraceConfig config, EnableTracingRequest request, int fd) {
    CompletableFuture<TracingDisabled> disabled = new CompletableFuture<>();
    port.invoke("EnableTracing", request.toByteString(), fd).whenComplete((reply, failure) -> {
      if (failure != null) {
        disabled.complete(new TracingDisabled("EnableTracing request rejected (" + messageOf(failure)
            + "); likely the connection to the service was lost"));
        return;
      }
      try {
        EnableTracingResponse response = EnableTracingResponse.parseFrom(reply.bytes());
        String error = response.getError();
        disabled.complete(new TracingDisabled(error));
      } catch (InvalidProtocolBufferException e) {
        disabled.complete(new TracingDisabled("undecodable EnableTracingResponse: " + e.getMessage()));
      }
    });
    return new TracingSession(config, disabled);
  }

  /** Starts a session enabled with {@code deferred_start}. */
  public CompletableFuture<Void> startTracing() {
    return call("StartTracing", StartTracingRequest.getDefaultInstance());
  }

  /** Changes the running session's config (the service applies what it can, e.g. filters). */
  public CompletableFuture<Void> changeTraceConfig(TraceConfig config) {
    return call("ChangeTraceConfig", ChangeTraceConfigRequest.newBuilder().setTraceConfig(config).build());
  }

  /** Stops the session: its data sources stop, and {@link TracingSession#disabled()} completes. */
  public CompletableFuture<Void> disableTracing() {
    return call("DisableTracing", DisableTracingRequest.getDefaultInstance());
  }

  /**
   * Asks every data source of the session to commit what it holds; completes when all did, fails
   * if one did not within the timeout.
   *
   * @param timeout zero for the session's flush_timeout_ms (or the service default, 5 s)
   */
  public CompletableFuture<Void> flush(Duration timeout, FlushFlags flags) {
    long ms = timeout.toMillis();
    if (ms < 0 || ms > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("flush timeout out of range: " + ms + " ms");
    }
    return call("Flush", FlushRequest.newBuilder().setTimeoutMs((int) ms).setFlags(flags.bits()).build());
  }

  /**
   * Reads the session's buffers: each whole packet goes to {@code sink}, in order, on the I/O
   * thread. Completes with the number of packets once the service sent its last reply; fails if
   * the sink threw (the rest of the stream is then ignored) or a packet was left unfinished.
   */
  public CompletableFuture<Long> readBuffers(TracePacketSink sink) {
    PacketAssembler assembler = new PacketAssembler(sink);
    IOException[] sinkFailure = {null};
    CompletableFuture<Long> result = new CompletableFuture<>();
    port.invokeStreaming("ReadBuffers", ReadBuffersRequest.getDefaultInstance().toByteString(), -1,
        reply -> {
          Fds.closeQuietly(reply.fd());
          if (sinkFailure[0] != null) {
            return;
          }
          try {
            assembler.accept(ReadBuffersResponse.parseFrom(reply.bytes()));
          } catch (IOException e) {
            sinkFailure[0] = e;
          }
        }).whenComplete((ignored, failure) -> {
          if (failure != null) {
            result.completeExceptionally(unwrap(failure));
          } else if (sinkFailure[0] != null) {
            result.completeExceptionally(sinkFailure[0]);
          } else if (assembler.danglingSlices() > 0) {
            result.completeExceptionally(new IOException("ReadBuffers ended inside a packet: "
                + assembler.danglingSlices() + " slices without last_slice_for_packet"));
          } else {
            result.complete(assembler.packets());
          }
        });
    return result;
  }

  /** Frees the session's buffers and ends it on the service. */
  public CompletableFuture<Void> freeBuffers() {
    return call("FreeBuffers", FreeBuffersRequest.getDefaultInstance());
  }

  /**
   * Detaches the running session under {@code key}: it keeps running after this connection ends,
   * and {@link #attach} with the same key (same uid) gets it back.
   */
  public CompletableFuture<Void> detach(String key) {
    return call("Detach", DetachRequest.newBuilder().setKey(key).build());
  }

  /**
   * Re-attaches to the session detached under {@code key}. On success it also asks to be told when
   * that session ends (EnableTracing with attach_notification_only), as upstream's client does.
   */
  public CompletableFuture<TracingSession> attach(String key) {
    return port.invoke("Attach", AttachRequest.newBuilder().setKey(key).build())
        .thenApply(reply -> {
          TraceConfig config = parse(reply, AttachResponse::parseFrom).getTraceConfig();
          return enable(config, EnableTracingRequest.newBuilder().setAttachNotificationOnly(true).build(), -1);
        });
  }

  /** The service's statistics for this consumer's session. */
  public CompletableFuture<TraceStats> getTraceStats() {
    return port.invoke("GetTraceStats", GetTraceStatsRequest.getDefaultInstance())
        .thenApply(reply -> parse(reply, GetTraceStatsResponse::parseFrom).getTraceStats());
  }

  /**
   * The service's producers, data sources and sessions. The service may stream the state in
   * several replies; they are merged.
   *
   * @param sessionsOnly leave producers and data sources out
   */
  public CompletableFuture<TracingServiceState> queryServiceState(boolean sessionsOnly) {
    TracingServiceState.Builder merged = TracingServiceState.newBuilder();
    IOException[] bad = {null};
    return port.invokeStreaming("QueryServiceState",
        QueryServiceStateRequest.newBuilder().setSessionsOnly(sessionsOnly).build().toByteString(), -1,
        reply -> {
          Fds.closeQuietly(reply.fd());
          try {
            merged.mergeFrom(QueryServiceStateResponse.parseFrom(reply.bytes()).getServiceState());
          } catch (InvalidProtocolBufferException e) {
            bad[0] = e;
          }
        }).thenApply(ignored -> {
          if (bad[0] != null) {
            throw new CompletionException(bad[0]);
          }
          return merged.build();
        });
  }

  /**
   * The data sources config asks for that no producer connected to the service offers now, by
   * name, each once, in config order. A misspelt name, or a data source its app never registered,
   * records nothing and makes no error; a producer may still register one later, so this says what
   * holds at the moment of asking.
   */
  public CompletableFuture<List<String>> dataSourcesNotOffered(TraceConfig config) {
    return queryServiceState(false).thenApply(state -> dataSourcesNotOffered(config, state));
  }

  /** The data sources config asks for that no producer in state offers, each once, in config order. */
  public static List<String> dataSourcesNotOffered(TraceConfig config, TracingServiceState state) {
    Set<String> offered = new HashSet<>();
    for (TracingServiceState.DataSource ds : state.getDataSourcesList()) {
      offered.add(ds.getDsDescriptor().getName());
    }
    Set<String> missing = new LinkedHashSet<>();
    for (TraceConfig.DataSource ds : config.getDataSourcesList()) {
      String name = ds.getConfig().getName();
      if (!offered.contains(name)) {
        missing.add(name);
      }
    }
    return List.copyOf(missing);
  }

  /** What the service supports (an older service without the method answers METHOD_NOT_FOUND). */
  public CompletableFuture<TracingServiceCapabilities> queryCapabilities() {
    return port.invoke("QueryCapabilities", QueryCapabilitiesRequest.getDefaultInstance())
        .thenApply(reply -> parse(reply, QueryCapabilitiesResponse::parseFrom).getCapabilities());
  }

  /**
   * Subscribes to service events; {@code listener} gets each on the I/O thread. The future
   * completes when the service ends the stream (usually at the end of the session).
   */
  public CompletableFuture<Void> observeEvents(Collection<ObservableEvents.Type> types,
      Consumer<ObservableEvents> listener) {
    ObserveEventsRequest request = ObserveEventsRequest.newBuilder().addAllEventsToObserve(types).build();
    return port.invokeStreaming("ObserveEvents", request.toByteString(), -1, reply -> {
      Fds.closeQuietly(reply.fd());
      if (!reply.hasMore()) {
        return; // the empty reply that closes the stream
      }
      try {
        listener.accept(ObserveEventsResponse.parseFrom(reply.bytes()).getEvents());
      } catch (InvalidProtocolBufferException e) {
        System.getLogger(TracingConsumer.class.getName()).log(System.Logger.Level.WARNING,
            "undecodable ObserveEventsResponse from " + socketPath + ": " + e.getMessage());
      }
    });
  }

  /**
   * Clones a running session into a new read-only one owned by this consumer; read it back with
   * {@link #readBuffers}, or, if the clone was of a write_into_file session, the service writes it
   * into {@code outputFd} (duplicated; -1 for none).
   */
  public CompletableFuture<CloneSessionResponse> cloneSession(CloneSessionRequest request, int outputFd)
      throws IOException {
    int fd = outputFd >= 0 ? Fds.dup(outputFd) : -1;
    return port.invoke("CloneSession", request.toByteString(), fd)
        .thenApply(reply -> parse(reply, CloneSessionResponse::parseFrom));
  }

  /** Asks the service to save the session marked for bug reports. */
  public CompletableFuture<SaveTraceForBugreportResponse> saveTraceForBugreport() {
    return port.invoke("SaveTraceForBugreport", SaveTraceForBugreportRequest.getDefaultInstance())
        .thenApply(reply -> parse(reply, SaveTraceForBugreportResponse::parseFrom));
  }

  /** Closes the connection; pending calls fail with CONNECTION_LOST. A session not detached ends. */
  @Override
  public void close() {
    client.close();
  }

  private CompletableFuture<Void> call(String method, MessageLite request) {
    return port.invoke(method, request).thenApply(reply -> null);
  }

  private interface Parser<T> {
    T parse(ByteString bytes) throws InvalidProtocolBufferException;
  }

  private <T> T parse(Reply reply, Parser<T> parser) {
    Fds.closeQuietly(reply.fd());
    try {
      return parser.parse(reply.bytes());
    } catch (InvalidProtocolBufferException e) {
      throw new CompletionException(
          new IOException("undecodable reply from " + socketPath + ": " + e.getMessage(), e));
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  private static String messageOf(Throwable t) {
    Throwable cause = unwrap(t);
    return cause.getMessage() != null ? cause.getMessage() : cause.toString();
  }
}
