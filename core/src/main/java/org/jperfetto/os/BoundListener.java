package org.jperfetto.os;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * A listening AF_UNIX socket made in two steps, so that it exists before any downcall is linked:
 * {@link #listen} binds and listens on a filesystem path with java.nio (the JDK's own native
 * code; spinning the first FFM stubs costs a fresh JVM tens of milliseconds), and
 * {@link #toUnixSocket()} later takes the socket over as a close-on-exec descriptor of ours.
 * Clients that connect in between wait in the listen backlog like any other not yet accepted
 * connection.
 *
 * <p>Abstract names ({@code "@name"}), which java.nio cannot bind, and systems without
 * /proc/net/unix (where the descriptor is found) go through {@link UnixSocket#listen} directly;
 * so does a bind that java.nio refuses, so that the failure is an {@link ErrnoException} with the
 * kernel's errno rather than java.nio's message.
 */
public final class BoundListener implements AutoCloseable {
  private static final Path UNIX_TABLE = Path.of("/proc/net/unix");
  private static final Path OWN_FDS = Path.of("/proc/self/fd");
  /** __SO_ACCEPTCON in the Flags column of /proc/net/unix: the socket listens. */
  private static final long ACCEPTCON = 0x10000;

  private final String path;
  private ServerSocketChannel channel; // the java.nio socket, until taken over or closed
  private UnixSocket socket; // the libc path's socket, until taken over or closed

  private BoundListener(String path, ServerSocketChannel channel, UnixSocket socket) {
    this.path = path;
    this.channel = channel;
    this.socket = socket;
  }

  /**
   * Binds and listens on {@code path} ("@name" for the abstract namespace); a {@code host:port}
   * address ({@link TcpSockets}) listens on TCP instead.
   */
  public static BoundListener listen(String path, int backlog) throws IOException {
    if (TcpSockets.isTcp(path)) {
      return new BoundListener(path, null, TcpSockets.listen(path, backlog)); // host:port
    }
    if (path.startsWith("@") || !Files.isReadable(UNIX_TABLE)) {
      return new BoundListener(path, null, UnixSocket.listen(path, backlog));
    }
    ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      ch.bind(UnixDomainSocketAddress.of(path), backlog);
      return new BoundListener(path, ch, null);
    } catch (IOException | RuntimeException e) {
      ch.close();
      return new BoundListener(path, null, UnixSocket.listen(path, backlog)); // libc's errno
    }
  }

  public String path() {
    return path;
  }

  /**
   * The socket on a close-on-exec descriptor of its own, which the caller owns from now on (this
   * object is done then: closing it does nothing more). Links the downcalls it needs.
   *
   * @throws IOException if this process's descriptor of the socket is not in /proc, or dup fails
   * @throws IllegalStateException if taken over or closed already
   */
  public synchronized UnixSocket toUnixSocket() throws IOException {
    UnixSocket taken = socket;
    if (taken == null) {
      if (channel == null) {
        throw new IllegalStateException("listener on " + path + " is taken over or closed");
      }
      taken = UnixSocket.own(Fds.dup(descriptorOf(path)), path);
      closeChannel(); // java.nio's descriptor only: ours keeps the socket listening
    }
    socket = null;
    return taken;
  }

  /**
   * This process's descriptor of the socket listening on {@code path}: the socket inodes that
   * /proc/net/unix lists as listening there, matched against the links in /proc/self/fd.
   */
  static int descriptorOf(String path) throws IOException {
    Set<String> links = new HashSet<>();
    String table = new String(Files.readAllBytes(UNIX_TABLE), StandardCharsets.UTF_8);
    // Num RefCount Protocol Flags Type St Inode Path; the path, the rest of the line, may hold spaces
    for (String line : table.split("\n")) {
      String[] f = line.split(" +", 8);
      if (f.length == 8 && f[7].equals(path) && isHex(f[3]) && (Long.parseLong(f[3], 16) & ACCEPTCON) != 0) {
        links.add("socket:[" + f[6] + "]");
      }
    }
    if (!links.isEmpty()) {
      try (DirectoryStream<Path> fds = Files.newDirectoryStream(OWN_FDS)) {
        for (Path fd : fds) {
          try {
            if (links.contains(Files.readSymbolicLink(fd).toString())) {
              return Integer.parseInt(fd.getFileName().toString());
            }
          } catch (IOException e) {
            // closed meanwhile (e.g. the stream's own descriptor): not ours to find
          }
        }
      }
    }
    throw new IOException("no descriptor of this process listens on " + path + " (per " + UNIX_TABLE + ")");
  }

  private static boolean isHex(String s) {
    if (s.isEmpty() || s.length() > 15) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (Character.digit(s.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  /** Stops listening unless taken over; the socket file stays (as with {@link UnixSocket#close}). */
  @Override
  public synchronized void close() {
    if (channel != null) {
      closeChannel();
    } else if (socket != null) {
      socket.close();
      socket = null;
    }
  }

  private void closeChannel() {
    try {
      channel.close();
    } catch (IOException e) {
      System.getLogger(BoundListener.class.getName())
          .log(System.Logger.Level.WARNING, "closing the java.nio listener on " + path + ": " + e.getMessage());
    }
    channel = null;
  }
}
