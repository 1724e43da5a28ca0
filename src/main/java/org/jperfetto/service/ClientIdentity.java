package org.jperfetto.service;

/**
 * Who is at the other end of a connection, as the transport learned it (SO_PEERCRED): trusted,
 * never taken from the peer's messages. pid is 0 when unknown.
 */
public record ClientIdentity(int uid, int pid) {}
