package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Perfetto's TCP endpoints: an address is {@code host:port} ({@code [v6-address]:port} for IPv6),
 * told apart from a socket path the way upstream does it: an address whose text after its last
 * colon is a number is TCP, anything else (and anything starting with {@code @}) is AF_UNIX. The
 * sockets are {@link UnixSocket}s with {@link UnixSocket#isTcp()} set, with TCP_NODELAY (the IPC
 * is request/reply) and, for listeners, SO_REUSEADDR.
 */
public final class TcpSockets {
  private static final long SOCKADDR_BYTES = 28; // sockaddr_in6, the larger of the two

  private TcpSockets() {}

  /** A host and a port, as parsed from {@code host:port} or {@code [v6]:port}. */
  public record Address(String host, int port) {
    @Override
    public String toString() {
      return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }

  /** True if {@code address} names a TCP endpoint rather than an AF_UNIX socket. */
  public static boolean isTcp(String address) {
    return parse(address) != null;
  }

  /** The host and port of a TCP address, or null if it is not one (see the class comment). */
  public static Address parse(String address) {
    if (address == null || address.isEmpty() || address.startsWith("@")) {
      return null;
    }
    int colon = address.lastIndexOf(':');
    if (colon < 0 || colon == address.length() - 1) {
      return null;
    }
    String portText = address.substring(colon + 1);
    for (int i = 0; i < portText.length(); i++) {
      if (!Character.isDigit(portText.charAt(i))) {
        return null;
      }
    }
    if (portText.length() > 5 || Integer.parseInt(portText) > 65535) {
      return null;
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new Address(host, Integer.parseInt(portText));
  }

  /** Binds and listens on {@code address} (port 0: any free port; see {@link #localPort}). */
  public static UnixSocket listen(String address, int backlog) throws IOException {
    Address a = require(address);
    InetAddress ip = resolve(a);
    Scratch s = Scratch.get();
    int fd = Libc.socket(s, family(ip), Libc.SOCK_STREAM | Libc.SOCK_CLOEXEC);
    try (Arena arena = Arena.ofConfined()) {
      Libc.setsockopt(s, fd, Libc.SOL_SOCKET, Libc.SO_REUSEADDR, 1);
      MemorySegment addr = arena.allocate(SOCKADDR_BYTES, 8);
      Libc.bind(s, fd, addr, fill(addr, ip, a.port()), address);
      Libc.listen(s, fd, backlog, address);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
    UnixSocket socket = UnixSocket.ownTcp(fd, address);
    if (a.port() != 0) {
      return socket;
    }
    try { // name it by the port the kernel chose, so that clients can be told where to go
      String bound = new Address(a.host(), localPort(socket)).toString();
      return UnixSocket.ownTcp(fd, bound);
    } catch (ErrnoException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  /** Connects (blocking) to {@code address}. */
  public static UnixSocket connect(String address) throws IOException {
    Address a = require(address);
    InetAddress ip = resolve(a);
    Scratch s = Scratch.get();
    int fd = Libc.socket(s, family(ip), Libc.SOCK_STREAM | Libc.SOCK_CLOEXEC);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment addr = arena.allocate(SOCKADDR_BYTES, 8);
      Libc.connect(s, fd, addr, fill(addr, ip, a.port()), address);
      noDelay(s, fd);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
    return UnixSocket.ownTcp(fd, address);
  }

  /** The port a TCP socket is bound to (the one the kernel chose for port 0). */
  public static int localPort(UnixSocket socket) throws ErrnoException {
    return address(socket, false).port();
  }

  /** The peer's address of a connected TCP socket. */
  public static Address peer(UnixSocket socket) throws ErrnoException {
    return address(socket, true);
  }

  static void noDelay(Scratch s, int fd) throws ErrnoException {
    Libc.setsockopt(s, fd, Libc.IPPROTO_TCP, Libc.TCP_NODELAY, 1);
  }

  private static Address address(UnixSocket socket, boolean peer) throws ErrnoException {
    if (!socket.isTcp()) {
      throw new IllegalArgumentException("not a TCP socket: " + socket);
    }
    Scratch s = Scratch.get();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment addr = arena.allocate(SOCKADDR_BYTES, 8);
      int len = peer ? Libc.getpeername(s, socket.fd(), addr) : Libc.getsockname(s, socket.fd(), addr);
      int family = addr.get(JAVA_SHORT, 0);
      int port = Short.toUnsignedInt(Short.reverseBytes(addr.get(JAVA_SHORT, 2)));
      byte[] ip = new byte[family == Libc.AF_INET6 ? 16 : 4];
      if ((family != Libc.AF_INET && family != Libc.AF_INET6) || len < (family == Libc.AF_INET6 ? 24 : 8)) {
        throw new ErrnoException(peer ? "getpeername" : "getsockname", Errno.EINVAL,
            "unexpected address family " + family + " of " + socket);
      }
      MemorySegment.copy(addr, JAVA_BYTE, family == Libc.AF_INET6 ? 8 : 4, ip, 0, ip.length);
      try {
        return new Address(InetAddress.getByAddress(ip).getHostAddress(), port);
      } catch (UnknownHostException e) {
        throw new IllegalStateException(e); // cannot happen for 4 or 16 bytes
      }
    }
  }

  private static Address require(String address) throws ErrnoException {
    Address a = parse(address);
    if (a == null) {
      throw new ErrnoException("connect", Errno.EINVAL, "not a host:port address: " + address);
    }
    return a;
  }

  private static InetAddress resolve(Address a) throws IOException {
    try {
      return InetAddress.getByName(a.host().isEmpty() ? "0.0.0.0" : a.host());
    } catch (UnknownHostException e) {
      throw new IOException("cannot resolve host of TCP endpoint " + a + ": " + e.getMessage(), e);
    }
  }

  private static int family(InetAddress ip) {
    return ip instanceof Inet6Address ? Libc.AF_INET6 : Libc.AF_INET;
  }

  /** Writes a sockaddr_in or sockaddr_in6; returns its length. */
  private static int fill(MemorySegment addr, InetAddress ip, int port) {
    addr.fill((byte) 0);
    addr.set(JAVA_SHORT, 0, (short) family(ip));
    addr.set(JAVA_SHORT, 2, Short.reverseBytes((short) port)); // network byte order
    byte[] raw = ip.getAddress();
    if (ip instanceof Inet4Address) {
      MemorySegment.copy(raw, 0, addr, JAVA_BYTE, 4, 4);
      return 16;
    }
    MemorySegment.copy(raw, 0, addr, JAVA_BYTE, 8, 16);
    addr.set(java.lang.foreign.ValueLayout.JAVA_INT, 24, ((Inet6Address) ip).getScopeId());
    return 28;
  }
}
