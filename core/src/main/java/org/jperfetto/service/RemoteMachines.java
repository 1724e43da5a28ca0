package org.jperfetto.service;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.RemoteClockSync;
import org.jperfetto.protos.SystemInfo;
import org.jperfetto.protos.TracePacket;

/**
 * The machines that relays (traced_relay, jtraced in relay mode) connected to this service, as
 * upstream's host keeps them: per relay connection its machine id, the SystemInfo its InitRelay
 * sent and its latest {@link #MAX_SYNCS} SyncClock rounds (the relay's clocks and the host's,
 * read when the request arrived). A session's first read-out writes, once per machine, a
 * SystemInfo packet and a RemoteClockSync packet carrying that machine_id, from which
 * trace_processor derives the offsets between the machines' clocks.
 *
 * <p>Everything here came from a remote peer: sizes are bounded ({@link #MAX_CLOCKS} readings per
 * round, the SystemInfo re-encoded from its parsed form). Service thread only.
 */
public final class RemoteMachines {
  /** SyncClock rounds kept per relay (upstream keeps the latest five). */
  public static final int MAX_SYNCS = 5;
  /** Clock readings taken from one SyncClock request; more are ignored. */
  public static final int MAX_CLOCKS = 16;

  private final Set<Relay> relays = new LinkedHashSet<>();

  /** One relay connection: registered on its first InitRelay or SyncClock. */
  public final class Relay {
    private final int machineId;
    private SystemInfo systemInfo;
    private final ArrayDeque<RemoteClockSync.SyncedClocks> syncs = new ArrayDeque<>();

    private Relay(int machineId) {
      this.machineId = machineId;
    }

    public int machineId() {
      return machineId;
    }

    /** InitRelay: the remote machine's SystemInfo (the latest one counts). */
    public void initRelay(SystemInfo info) {
      systemInfo = info;
    }

    /**
     * A SyncClock request: the relay's readings and the host's, taken as the request arrived.
     * PING and UPDATE rounds are kept alike; trace_processor pairs consecutive ones.
     */
    public void syncClock(List<ClockSource.Reading> relayClocks, List<ClockSource.Reading> hostClocks) {
      if (syncs.size() >= MAX_SYNCS) {
        syncs.pollFirst();
      }
      syncs.addLast(RemoteClockSync.SyncedClocks.newBuilder().setClientClocks(snapshot(relayClocks))
          .setHostClocks(snapshot(hostClocks)).build());
    }

    /** The relay disconnected: its machine is forgotten (as upstream does). */
    public void disconnect() {
      relays.remove(this);
    }
  }

  /** A new relay connection of machine {@code machineId} (never 0: that is this machine). */
  public Relay connect(int machineId) {
    if (machineId == 0) {
      throw new IllegalArgumentException("machine id 0 is the service's own machine");
    }
    Relay r = new Relay(machineId);
    relays.add(r);
    return r;
  }

  public boolean isEmpty() {
    return relays.isEmpty();
  }

  /** The machine ids with a connected relay, in connection order. */
  public List<Integer> machineIds() {
    List<Integer> ids = new ArrayList<>();
    for (Relay r : relays) {
      if (!ids.contains(r.machineId)) {
        ids.add(r.machineId);
      }
    }
    return ids;
  }

  /**
   * One SystemInfo packet per machine that sent one: machine_id set, on the service's sequence
   * with the service's uid.
   */
  List<byte[]> systemInfoPackets(int serviceUid) {
    List<byte[]> out = new ArrayList<>();
    Set<Integer> done = new HashSet<>();
    for (Relay r : relays) {
      if (r.systemInfo != null && done.add(r.machineId)) {
        out.add(TracePacket.newBuilder().setSystemInfo(r.systemInfo).setMachineId(r.machineId)
            .setTrustedUid(serviceUid).setTrustedPacketSequenceId(ServiceLimits.SERVICE_SEQUENCE_ID)
            .build().toByteArray());
      }
    }
    return out;
  }

  /** One RemoteClockSync packet per machine with synced rounds: machine_id and the service's uid. */
  List<byte[]> clockSyncPackets(int serviceUid) {
    List<byte[]> out = new ArrayList<>();
    Set<Integer> done = new HashSet<>();
    for (Relay r : relays) {
      if (!r.syncs.isEmpty() && done.add(r.machineId)) {
        out.add(TracePacket.newBuilder().setMachineId(r.machineId).setTrustedUid(serviceUid)
            .setRemoteClockSync(RemoteClockSync.newBuilder().addAllSyncedClocks(r.syncs))
            .build().toByteArray());
      }
    }
    return out;
  }

  private static ClockSnapshot snapshot(List<ClockSource.Reading> readings) {
    ClockSnapshot.Builder b = ClockSnapshot.newBuilder();
    for (int i = 0; i < readings.size() && i < MAX_CLOCKS; i++) {
      ClockSource.Reading r = readings.get(i);
      b.addClocks(ClockSnapshot.Clock.newBuilder().setClockId(r.clockId()).setTimestamp(r.timestampNs()));
    }
    return b.build();
  }
}
