package org.jperfetto.os;

/** The peer process of a connected AF_UNIX socket as the kernel saw it at connect time (SO_PEERCRED). */
public record PeerCredentials(int pid, int uid, int gid) {}
