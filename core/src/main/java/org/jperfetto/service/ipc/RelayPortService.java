package org.jperfetto.service.ipc;

import com.google.protobuf.InvalidProtocolBufferException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.ipc.ServiceListener;
import org.jperfetto.protos.InitRelayRequest;
import org.jperfetto.protos.InitRelayResponse;
import org.jperfetto.protos.SyncClockRequest;
import org.jperfetto.protos.SyncClockResponse;
import org.jperfetto.service.ClockSource;
import org.jperfetto.service.RemoteMachines;
import org.jperfetto.service.TracingService;

/**
 * RelayPort (relay_port.proto) on a producer endpoint where jtraced was asked to expose it
 * (--enable-relay-endpoint): a relay's own connection sends InitRelay with its machine's
 * SystemInfo and SyncClock rounds; each is recorded for the relay's machine in
 * {@link RemoteMachines}. The host's clocks are read as the request is decoded, as close to its
 * arrival as this thread gets.
 *
 * <p>Only a TCP client that named its machine with SetPeerIdentity (machine id not 0) may use it:
 * a local client would claim the host's own machine.
 */
public final class RelayPortService {
  private static final System.Logger LOG = System.getLogger(RelayPortService.class.getName());
  public static final String SERVICE_NAME = "RelayPort";
  /** relay_port.proto's methods in declaration order (their ids); ServicePortMethodsTest checks. */
  static final List<String> METHODS = List.of("InitRelay", "SyncClock");

  private final TracingService service;
  private final ClockSource clocks;
  /** Client id of this host's connection to its relay record; values used on the service thread. */
  private final Map<Long, RemoteMachines.Relay> relays = new ConcurrentHashMap<>();
  private final ServiceDefinition definition;

  public RelayPortService(TracingService service, ClockSource clocks) {
    this.service = service;
    this.clocks = clocks;
    definition = ServiceDefinition.fromMethodNames(SERVICE_NAME, METHODS,
        Map.of("InitRelay", this::initRelay, "SyncClock", this::syncClock), new ServiceListener() {
          @Override
          public void onClientDisconnected(ClientInfo client) {
            service.taskRunner().runOrPost(() -> {
              RemoteMachines.Relay r = relays.remove(client.clientId());
              if (r != null) {
                r.disconnect();
              }
            });
          }
        });
  }

  public ServiceDefinition definition() {
    return definition;
  }

  private void initRelay(MethodCall call) throws InvalidProtocolBufferException {
    InitRelayRequest req = InitRelayRequest.parseFrom(call.args());
    if (!allowed(call)) {
      return;
    }
    service.taskRunner().runOrPost(() -> {
      relayOf(call.client()).initRelay(req.getSystemInfo());
      call.reply(InitRelayResponse.getDefaultInstance());
    });
  }

  private void syncClock(MethodCall call) throws InvalidProtocolBufferException {
    List<ClockSource.Reading> host = clocks.snapshot();
    SyncClockRequest req = SyncClockRequest.parseFrom(call.args());
    if (!allowed(call)) {
      return;
    }
    List<ClockSource.Reading> remote = new ArrayList<>();
    for (SyncClockRequest.Clock c : req.getClocksList()) {
      if (remote.size() == RemoteMachines.MAX_CLOCKS) {
        break;
      }
      remote.add(new ClockSource.Reading(c.getClockId(), c.getTimestamp()));
    }
    service.taskRunner().runOrPost(() -> {
      relayOf(call.client()).syncClock(remote, host);
      call.reply(SyncClockResponse.getDefaultInstance());
    });
  }

  private boolean allowed(MethodCall call) {
    if (call.client().machineId() != 0) {
      return true;
    }
    LOG.log(Level.WARNING, "RelayPort." + call.methodName() + " refused: client " + call.client().clientId()
        + " did not name a remote machine (SetPeerIdentity over TCP)");
    call.fail();
    return false;
  }

  /** Service thread. */
  private RemoteMachines.Relay relayOf(ClientInfo client) {
    return relays.computeIfAbsent(client.clientId(),
        id -> service.remoteMachines().connect(client.machineId()));
  }
}
