package org.jperfetto.service.ipc;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.SocketRelay;
import org.jperfetto.os.BoundListener;
import org.jperfetto.protos.InitRelayRequest;
import org.jperfetto.protos.SyncClockRequest;
import org.jperfetto.service.ClockSource;
import org.jperfetto.service.LocalSystemInfo;
import org.jperfetto.service.TracingService;

/**
 * jtraced in relay mode, what upstream's traced_relay does: serves the local producers on the usual
 * producer socket(s) by relaying each connection to the host's tracing service
 * ({@link SocketRelay}), and keeps a connection of its own to the host's RelayPort: SetPeerIdentity,
 * InitRelay with this machine's SystemInfo, then clock synchronisation rounds (a PING with this
 * machine's clocks, an UPDATE once it is answered; again every {@link #SYNC_INTERVAL_MS}).
 * When that connection fails it is made again, waiting twice as long each time up to
 * {@link #MAX_RETRY_MS} (as upstream's relay).
 *
 * <p>The machine is named as upstream's relay names it: the id hint is the kernel's boot id
 * (/proc/sys/kernel/random/boot_id), the name is $PERFETTO_MACHINE_NAME, else the system's name.
 */
public final class ProducerRelay implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ProducerRelay.class.getName());
  static final long SYNC_INTERVAL_MS = 30_000;
  static final long FIRST_RETRY_MS = 1_000;
  static final long MAX_RETRY_MS = 30_000;
  public static final String RELAY_ENV = "PERFETTO_RELAY_SOCK_NAME";

  private final List<SocketRelay> relays;
  private final String hostAddress;
  private final ClockSource clocks;
  private final String machineIdHint;
  private final String machineName;
  private final ScheduledExecutorService timer;
  private volatile IpcClient client;
  private volatile ScheduledFuture<?> next;
  private long retryMs = FIRST_RETRY_MS;
  private volatile boolean closed;
  private volatile long completedSyncs;

  private ProducerRelay(List<SocketRelay> relays, String hostAddress, ClockSource clocks, String machineIdHint,
      String machineName) {
    this.relays = relays;
    this.hostAddress = hostAddress;
    this.clocks = clocks;
    this.machineIdHint = machineIdHint;
    this.machineName = machineName;
    this.timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("jperfetto-relay-clock").daemon().factory());
  }

  /**
   * Listens on {@code producerSockets} (paths, as jtraced's; stale socket files replaced) and
   * relays to {@code hostAddress}; starts the RelayPort connection.
   */
  public static ProducerRelay start(List<String> producerSockets, String hostAddress, ClockSource clocks)
      throws IOException {
    List<SocketRelay> relays = new ArrayList<>();
    List<String> files = new ArrayList<>();
    String hint = machineIdHint();
    String name = machineName();
    try {
      for (String path : producerSockets) {
        BoundListener listener = ServiceHost.listen(path, ServiceHost.PRODUCER_SOCKET_MODE, files);
        relays.add(SocketRelay.start(listener.toUnixSocket(), hostAddress, hint, name));
      }
    } catch (IOException | RuntimeException e) {
      relays.forEach(SocketRelay::close);
      for (String f : files) {
        Files.deleteIfExists(Path.of(f));
      }
      throw e;
    }
    ProducerRelay relay = new ProducerRelay(relays, hostAddress, clocks, hint, name);
    relay.files.addAll(files);
    relay.timer.execute(relay::connect);
    return relay;
  }

  private final List<String> files = new ArrayList<>();

  /** The local producer sockets. */
  public List<String> producerSockets() {
    return relays.stream().map(SocketRelay::address).toList();
  }

  /** SyncClock rounds (PING and UPDATE answered) completed so far. */
  public long completedSyncs() {
    return completedSyncs;
  }

  /** The kernel's boot id, else "" (the host then tells machines apart by their address). */
  static String machineIdHint() {
    try {
      return Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).strip();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  static String machineName() {
    String env = System.getenv("PERFETTO_MACHINE_NAME");
    if (env != null) {
      return env;
    }
    try {
      return Files.readString(Path.of("/proc/sys/kernel/ostype"), StandardCharsets.US_ASCII).strip();
    } catch (IOException | RuntimeException e) {
      return System.getProperty("os.name", "");
    }
  }

  /** Timer thread. */
  private void connect() {
    if (closed) {
      return;
    }
    IpcClient c;
    try {
      c = IpcClient.connect(hostAddress, cause -> onTimer(() -> onLost(cause.getMessage())));
      c.setPeerIdentity((int) ProcessHandle.current().pid(), TracingService.currentUid(), machineIdHint, machineName);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "relay: cannot connect to the host " + hostAddress + ": " + e.getMessage());
      retryLater();
      return;
    }
    client = c;
    c.bind(RelayPortService.SERVICE_NAME).whenComplete((port, err) -> onTimer(() -> {
      if (err != null) {
        LOG.log(Level.WARNING, "relay: the host " + hostAddress + " does not serve RelayPort (start it with "
            + "--enable-relay-endpoint): " + err.getMessage());
        c.close();
        return; // onLost retries
      }
      retryMs = FIRST_RETRY_MS;
      port.invoke("InitRelay", InitRelayRequest.newBuilder().setSystemInfo(LocalSystemInfo.read()).build());
      syncRound(c, port);
    }));
  }

  /** A PING, then an UPDATE when the PING is answered, then the next round later. */
  private void syncRound(IpcClient c, BoundService port) {
    sync(port, SyncClockRequest.Phase.PING)
        .thenCompose(r -> sync(port, SyncClockRequest.Phase.UPDATE))
        .whenComplete((r, err) -> onTimer(() -> {
          if (err != null || closed || client != c) {
            return;
          }
          completedSyncs++;
          next = timer.schedule(() -> syncRound(c, port), SYNC_INTERVAL_MS, TimeUnit.MILLISECONDS);
        }));
  }

  /** Runs task on the timer thread unless the relay is closing. */
  private void onTimer(Runnable task) {
    try {
      timer.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  private CompletableFuture<?> sync(BoundService port, SyncClockRequest.Phase phase) {
    SyncClockRequest.Builder req = SyncClockRequest.newBuilder().setPhase(phase);
    for (ClockSource.Reading r : clocks.snapshot()) {
      req.addClocks(SyncClockRequest.Clock.newBuilder().setClockId(r.clockId()).setTimestamp(r.timestampNs()));
    }
    return port.invoke("SyncClock", req.build());
  }

  private void onLost(String why) {
    if (closed) {
      return;
    }
    LOG.log(Level.WARNING, "relay: connection to the host " + hostAddress + " lost: " + why);
    client = null;
    retryLater();
  }

  private void retryLater() {
    if (closed) {
      return;
    }
    next = timer.schedule(this::connect, retryMs, TimeUnit.MILLISECONDS);
    retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    IpcClient c = client;
    if (c != null) {
      c.close();
    }
    relays.forEach(SocketRelay::close);
    for (String f : files) {
      try {
        Files.deleteIfExists(Path.of(f));
      } catch (IOException e) {
        LOG.log(Level.WARNING, "cannot remove socket " + f + ": " + e.getMessage());
      }
    }
  }
}
