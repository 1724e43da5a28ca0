package org.jperfetto.tracing;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ipc.ServiceHost;

/**
 * The in-process backend (upstream's {@code Tracing::Initialize} with {@code kInProcessBackend}):
 * a jtraced embedded in this process, and this process's {@link TracingProducer} connected to it,
 * for an application that only wants a trace file. The data sources and the TrackEvent API are
 * the same as with the system backend; only where the producer connects differs.
 *
 * <pre>{@code
 * TrackEvent te = TrackEvent.builder().categories(app).build();
 * try (InProcessTracing tracing = InProcessTracing.start(
 *         TracingProducer.builder("my-app").dataSource(te.dataSource()))) {
 *   try (InProcessSession s = tracing.newSession().writeTo(Path.of("app.perfetto-trace")).start()) {
 *     te.begin(app, "work"); ... te.end(app);
 *   } // stopped: flushed, drained, the file complete
 * }
 * }</pre>
 *
 * <p>The service listens only in a fresh directory of mode 0700 under java.io.tmpdir (no other
 * user's process can reach it, and nobody finds it at the well-known paths); {@link #close()}
 * stops every session still running, disconnects the producer, stops the service and removes the
 * directory.
 */
public final class InProcessTracing implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(InProcessTracing.class.getName());
  /** How long {@link #start} waits for the producer to connect and register its data sources. */
  public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  /**
   * The producer's SMB size when its builder sets no hint: 4 MiB, not the 256 KiB a system-wide
   * service hands out. Here the memory is the application's own, and a buffer of 1024 pages lets
   * the producer hand chunks over 16 to a CommitData (see SharedMemoryArbiter's commit batching):
   * a slice through the in-process service then costs about what it costs with no service at all.
   */
  public static final int DEFAULT_SMB_BYTES = 4 << 20;
  static final String PRODUCER_SOCKET = "producer.sock";
  static final String CONSUMER_SOCKET = "consumer.sock";

  private final PrivateSocketDir dir;
  private final ServiceHost host;
  private final TracingProducer producer;
  private final Set<InProcessSession> sessions = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private InProcessTracing(PrivateSocketDir dir, ServiceHost host, TracingProducer producer) {
    this.dir = dir;
    this.host = host;
    this.producer = producer;
  }

  /**
   * Starts the embedded service and the producer {@code producer} describes, connected to it; returns
   * once its data sources are registered. The builder's socket path is replaced by the private one,
   * and its SMB size hint, when it sets none, by {@link #DEFAULT_SMB_BYTES}.
   *
   * @throws IOException if the service cannot listen, or the producer does not connect in time
   */
  public static InProcessTracing start(TracingProducer.Builder producer) throws IOException {
    Objects.requireNonNull(producer, "producer");
    PrivateSocketDir dir = PrivateSocketDir.create();
    ServiceHost host = null;
    TracingProducer p = null;
    try {
      host = ServiceHost.start(ServiceHost.Options.of(dir.socket(PRODUCER_SOCKET), dir.socket(CONSUMER_SOCKET)));
      if (producer.smbSizeHint() == 0) {
        producer.smbSizeHint(DEFAULT_SMB_BYTES);
      }
      p = producer.socketPath(host.producerSockets().get(0)).start();
      if (!p.awaitConnected(CONNECT_TIMEOUT)) {
        throw new IOException("the producer did not connect to the in-process service within "
            + CONNECT_TIMEOUT.toMillis() + " ms");
      }
      // Its RegisterDataSource requests went before the Sync: the data sources are known after it.
      p.sync().get(CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return new InProcessTracing(dir, host, p);
    } catch (IOException | RuntimeException | ExecutionException | TimeoutException | InterruptedException e) {
      if (p != null) {
        p.close();
      }
      if (host != null) {
        host.close();
      }
      dir.close();
      if (e instanceof IOException io) {
        throw io;
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IOException("starting the in-process service failed: " + e, e);
    }
  }

  /** The producer connected to the embedded service (register more data sources on it). */
  public TracingProducer producer() {
    return producer;
  }

  /**
   * A new session with {@link TraceConfigs#defaults()}: every default track_event category and
   * {@code jvm.jfr} (if registered) into one 32 MiB buffer, until stopped.
   */
  public InProcessSession newSession() {
    return newSession(TraceConfigs.defaults(), false);
  }

  /**
   * A new session with config (as upstream's {@code Tracing::NewTrace()} then {@code Setup}): nothing
   * runs until {@link InProcessSession#start()}. Sessions are independent; several may run at once.
   * {@link TraceConfigs} builds the common configs and reads text ones. Its start logs a warning
   * for each data source of config that no producer offers (a misspelt or unregistered one).
   */
  public InProcessSession newSession(TraceConfig config) {
    return newSession(config, true);
  }

  /**
   * A session; with warnMissing its start logs each data source of config no producer offers (the
   * defaults name jvm.jfr for whoever registered it, so they are not checked).
   */
  private InProcessSession newSession(TraceConfig config, boolean warnMissing) {
    Objects.requireNonNull(config, "config");
    if (closed) {
      throw new IllegalStateException("in-process tracing closed");
    }
    InProcessSession s = new InProcessSession(this, config, warnMissing);
    sessions.add(s);
    return s;
  }

  /** Sessions created and not yet stopped. */
  public List<InProcessSession> sessions() {
    return List.copyOf(sessions);
  }

  String consumerSocket() {
    return host.consumerSocket();
  }

  /** The producer socket (inside the private directory). */
  String producerSocket() {
    return host.producerSockets().get(0);
  }

  java.nio.file.Path directory() {
    return dir.path();
  }

  void ended(InProcessSession session) {
    sessions.remove(session);
  }

  /**
   * Stops every session still running (each written or kept complete, as by its own stop), then the
   * producer, then the service, and removes the socket directory.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (InProcessSession s : List.copyOf(sessions)) {
      try {
        s.stop();
      } catch (IOException | RuntimeException e) {
        LOG.log(Level.WARNING, "stopping an in-process session at close failed: " + e.getMessage());
      }
    }
    // The service first: a producer closing under it, with a command unread, reads as a reset peer.
    host.close();
    producer.close();
    dir.close();
  }
}
