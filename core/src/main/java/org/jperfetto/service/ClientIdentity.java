package org.jperfetto.service;

/**
 * Who is at the other end of a connection, as the transport learned it (SO_PEERCRED, or a relay's
 * SetPeerIdentity on a TCP endpoint): trusted, never taken from the producer's own messages. pid is
 * 0 when unknown; machineId is 0 for the service's own machine, else the id the host gave the
 * producer's machine (stamped on its packets as machine_id), and machineName the name the relay
 * gave it ("" when none).
 */
public record ClientIdentity(int uid, int pid, int machineId, String machineName) {
  public ClientIdentity {
    machineName = machineName == null ? "" : machineName;
  }

  /** A producer on the service's own machine. */
  public ClientIdentity(int uid, int pid) {
    this(uid, pid, 0, "");
  }

  public boolean isHostMachine() {
    return machineId == 0;
  }
}
