package org.jperfetto.ipc;

import java.nio.charset.StandardCharsets;
import org.jperfetto.os.PeerCredentials;

/**
 * Who is on the other end of a host connection.
 *
 * @param clientId unique per host, from 1 in accept order
 * @param credentials on AF_UNIX the peer's pid/uid/gid from SO_PEERCRED at accept time
 *     (kernel-verified; the wire's SetPeerIdentity is ignored there). On TCP, pid 0 (unknown) and
 *     uid 0, as upstream's host has them, until a SetPeerIdentity frame (sent by a relay for the
 *     producer it forwards) names the pid and uid the relay saw on its own AF_UNIX socket
 * @param machineId 0 for this machine; for a TCP peer that sent SetPeerIdentity, the id derived
 *     from its machine_id_hint (else from its IP address) by {@link #machineIdOf}
 * @param machineName the peer's machine_name from SetPeerIdentity, "" if none
 * @param tcp the connection is TCP: no descriptors can be passed (shared memory is emulated)
 */
public record ClientInfo(long clientId, PeerCredentials credentials, int machineId, String machineName,
    boolean tcp) {
  /** A local (AF_UNIX) client. */
  public ClientInfo(long clientId, PeerCredentials credentials) {
    this(clientId, credentials, 0, "", false);
  }

  public int uid() {
    return credentials.uid();
  }

  public int pid() {
    return credentials.pid();
  }

  /**
   * The machine id upstream's host gives a remote peer: FNV-1a (64 bit) over the hint's bytes, or,
   * with no hint, over the peer's IP address (without the port), cut to the low 32 bits; 0 is
   * reserved for the host's own machine and becomes 1.
   */
  public static int machineIdOf(String hint, String peerHost) {
    byte[] bytes = (hint == null || hint.isEmpty() ? peerHost : hint).getBytes(StandardCharsets.UTF_8);
    long h = 0xcbf29ce484222325L;
    for (byte b : bytes) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    int id = (int) h;
    return id == 0 ? 1 : id;
  }
}
