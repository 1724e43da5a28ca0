package org.jperfetto.ipc;

import org.jperfetto.os.PeerCredentials;

/**
 * Who is on the other end of a host connection.
 *
 * @param clientId unique per host, from 1 in accept order
 * @param credentials the peer's pid/uid/gid from SO_PEERCRED at accept time (kernel-verified;
 *     the wire's SetPeerIdentity is ignored on AF_UNIX)
 */
public record ClientInfo(long clientId, PeerCredentials credentials) {
  public int uid() {
    return credentials.uid();
  }

  public int pid() {
    return credentials.pid();
  }
}
