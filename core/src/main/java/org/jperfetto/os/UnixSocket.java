package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;

/**
 * An AF_UNIX SOCK_STREAM socket, or, for Perfetto's TCP endpoints ({@link TcpSockets}), a TCP one
 * ({@link #isTcp()}: no descriptors travel, no SO_PEERCRED): listening or connected, blocking unless
 * {@link #setNonBlocking(boolean) set otherwise}, close-on-exec.
 *
 * <p>Addresses: a path starting with {@code "@"} names the abstract namespace (the rest is the
 * name, no trailing NUL, as upstream Perfetto spells it); anything else is a filesystem path.
 *
 * <p>{@link #send} and {@link #receive} carry at most one descriptor per call (SCM_RIGHTS) and
 * allocate nothing: they use the calling thread's native scratch. Native segments are handed to
 * the kernel directly; heap segments go through a 128 KiB per-thread bounce buffer, so one call
 * moves at most that many bytes of a heap segment. The caller must keep {@code buf} alive for the
 * call and must not close the socket while another thread is inside a call on it.
 */
public final class UnixSocket implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(UnixSocket.class.getName());
  private static final VarHandle FD;

  static {
    try {
      FD = MethodHandles.lookup().findVarHandle(UnixSocket.class, "fd", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile int fd;
  private final String address;
  private final boolean tcp;

  private UnixSocket(int fd, String address) {
    this(fd, address, false);
  }

  private UnixSocket(int fd, String address, boolean tcp) {
    this.fd = fd;
    this.address = address;
    this.tcp = tcp;
  }

  /** Wraps a descriptor this package just made (close-on-exec, AF_UNIX stream). */
  static UnixSocket own(int fd, String address) {
    return new UnixSocket(fd, address);
  }

  /** Wraps a TCP stream descriptor this package just made (close-on-exec). */
  static UnixSocket ownTcp(int fd, String address) {
    return new UnixSocket(fd, address, true);
  }

  /** True for a TCP socket (AF_INET or AF_INET6): no SCM_RIGHTS, no SO_PEERCRED. */
  public boolean isTcp() {
    return tcp;
  }

  /** Binds and listens on {@code path}. A stale filesystem socket is not removed: see {@link #unlinkStale}. */
  public static UnixSocket listen(String path, int backlog) throws ErrnoException {
    return open(path, "bind", (s, fd, addr, len) -> {
      Libc.bind(s, fd, addr, len, path);
      Libc.listen(s, fd, backlog, path);
    });
  }

  /** Connects (blocking) to a listening socket at {@code path}. */
  public static UnixSocket connect(String path) throws ErrnoException {
    return open(path, "connect", (s, fd, addr, len) -> Libc.connect(s, fd, addr, len, path));
  }

  /** What listen and connect do with a fresh socket and its sockaddr_un. */
  private interface AddressUse {
    void apply(Scratch s, int fd, MemorySegment addr, int addrLen) throws ErrnoException;
  }

  private static UnixSocket open(String path, String call, AddressUse use) throws ErrnoException {
    Scratch s = Scratch.get();
    int fd = Libc.socket(s, Libc.SOCK_STREAM | Libc.SOCK_CLOEXEC);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment addr = arena.allocate(Libc.SOCKADDR_UN_BYTES, 8);
      use.apply(s, fd, addr, fillAddress(addr, path, call));
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
    return new UnixSocket(fd, path);
  }

  /** A connected pair of sockets (socketpair(2)), e.g. to wake a thread or for tests. */
  public static UnixSocket[] pair() throws ErrnoException {
    Scratch s = Scratch.get();
    Libc.socketpair(s, Libc.SOCK_STREAM | Libc.SOCK_CLOEXEC, s.word);
    return new UnixSocket[] {
      new UnixSocket(s.word.get(JAVA_INT, 0), "socketpair"), new UnixSocket(s.word.get(JAVA_INT, 4), "socketpair")
    };
  }

  /**
   * Takes ownership of an already open AF_UNIX stream socket (an inherited or received descriptor);
   * {@code address} only labels it in messages. Fails with ENOTSOCK for other descriptors.
   */
  public static UnixSocket adopt(int fd, String address) throws ErrnoException {
    Scratch s = Scratch.get();
    int len = Libc.getsockopt(s, fd, Libc.SOL_SOCKET, Libc.SO_DOMAIN, s.word);
    if (len < 4 || s.word.get(JAVA_INT, 0) != Libc.AF_UNIX) {
      throw new ErrnoException("getsockopt", Errno.EPROTOTYPE, "fd " + fd + " is not an AF_UNIX socket");
    }
    return new UnixSocket(fd, address);
  }

  /**
   * Removes a filesystem socket left behind by a dead server: only if {@code path} is a socket
   * file (not a regular file, directory or link) and nothing accepts connections on it. Returns
   * whether it removed something. Abstract names need no cleanup and return false.
   */
  public static boolean unlinkStale(String path) throws IOException {
    if (path.startsWith("@")) {
      return false;
    }
    Path p = Path.of(path);
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    if (!Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther()) {
      throw new IOException("not a socket file, left alone: " + path);
    }
    // Probed with java.nio rather than connect(): jtraced checks its socket paths before it links
    // any downcall (see BoundListener). A refused connection is ConnectException (ECONNREFUSED).
    try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      probe.connect(UnixDomainSocketAddress.of(path));
      return false; // a server is listening: not stale
    } catch (ConnectException e) {
      return Files.deleteIfExists(p);
    }
  }

  /** Writes a sockaddr_un for {@code path}; returns its length. */
  private static int fillAddress(MemorySegment addr, String path, String call) throws ErrnoException {
    boolean isAbstract = path.startsWith("@");
    byte[] name = (isAbstract ? path.substring(1) : path).getBytes(StandardCharsets.UTF_8);
    if (!isAbstract && name.length == 0) {
      throw new ErrnoException(call, Errno.ENOENT, "empty socket path");
    }
    if (!isAbstract && path.indexOf('\0') >= 0) {
      throw new ErrnoException(call, Errno.EINVAL, "NUL in socket path " + path.replace('\0', '?'));
    }
    // Filesystem paths need a terminating NUL; abstract names need the leading one.
    if (name.length + 1 > Libc.SUN_PATH_BYTES) {
      throw new ErrnoException(call, Errno.ENAMETOOLONG,
          path + ": " + name.length + " bytes, at most " + (Libc.SUN_PATH_BYTES - 1));
    }
    addr.fill((byte) 0);
    addr.set(JAVA_SHORT, 0, (short) Libc.AF_UNIX);
    MemorySegment.copy(name, 0, addr, JAVA_BYTE, isAbstract ? 3 : 2, name.length);
    return 2 + 1 + name.length;
  }

  /**
   * Accepts one connection (close-on-exec, blocking). Returns null if this socket is non-blocking
   * and no connection is pending.
   */
  public UnixSocket accept() throws ErrnoException {
    Scratch s = Scratch.get();
    int client = Libc.accept4(s, fd);
    if (client >= 0 && tcp) {
      TcpSockets.noDelay(s, client);
    }
    return client < 0 ? null : new UnixSocket(client, address, tcp);
  }

  public void setNonBlocking(boolean nonBlocking) throws ErrnoException {
    Scratch s = Scratch.get();
    int flags = Libc.fcntl(s, fd, Libc.F_GETFL, 0);
    int wanted = nonBlocking ? flags | Libc.O_NONBLOCK : flags & ~Libc.O_NONBLOCK;
    if (wanted != flags) {
      Libc.fcntl(s, fd, Libc.F_SETFL, wanted);
    }
  }

  /** The descriptor, or -1 once closed. */
  public int fd() {
    return fd;
  }

  /** The address this socket listens on or connected to (accepted sockets: the listener's). */
  public String address() {
    return address;
  }

  /**
   * Sends up to {@code len} bytes from {@code buf[offset..]} and, if {@code fdToPass >= 0}, that
   * descriptor with the first byte (SCM_RIGHTS; the caller still owns and may close its copy).
   * MSG_NOSIGNAL: a dead peer is an EPIPE ErrnoException, never SIGPIPE.
   *
   * @return bytes sent (may be fewer than {@code len}), or -1 when a non-blocking socket's buffer is
   *     full (nothing, including the descriptor, was sent)
   */
  public long send(MemorySegment buf, long offset, long len, int fdToPass) throws ErrnoException {
    if (tcp && fdToPass >= 0) {
      throw new ErrnoException("sendmsg", Errno.EINVAL, "no descriptor can travel over TCP (" + address + ")");
    }
    return send(buf, offset, len, fdToPass, null);
  }

  /**
   * Sends several descriptors in one SCM_RIGHTS message. Perfetto's protocol passes one; this is
   * here so tests can play a peer that sends more than that.
   */
  long sendDescriptors(MemorySegment buf, long offset, long len, int... fds) throws ErrnoException {
    if (fds.length == 0 || fds.length > Scratch.MAX_FDS_PER_MESSAGE) {
      throw new IllegalArgumentException("1.." + Scratch.MAX_FDS_PER_MESSAGE + " descriptors per message, not "
          + fds.length);
    }
    return send(buf, offset, len, fds[0], fds);
  }

  /** One sendmsg: {@code fds} if not null, else {@code fdToPass} if not negative. */
  private long send(MemorySegment buf, long offset, long len, int fdToPass, int[] fds) throws ErrnoException {
    Objects.checkFromIndexSize(offset, len, buf.byteSize());
    if (len == 0 && fdToPass >= 0) {
      throw new IllegalArgumentException("a descriptor needs at least one byte to travel with: fd=" + fdToPass);
    }
    Scratch s = Scratch.get();
    long address;
    if (buf.isNative()) {
      requireAlive(buf);
      address = buf.address() + offset;
    } else {
      len = Math.min(len, Scratch.BOUNCE_BYTES);
      MemorySegment bounce = s.bounce();
      MemorySegment.copy(buf, offset, bounce, 0, len);
      address = bounce.address();
    }
    setIovec(s, address, len);
    MemorySegment m = s.msghdr;
    if (fdToPass >= 0) {
      int count = fds == null ? 1 : fds.length;
      MemorySegment c = s.control;
      c.set(JAVA_LONG, 0, Libc.CMSG_HEADER_BYTES + 4L * count); // CMSG_LEN
      c.set(JAVA_INT, Libc.CMSG_LEVEL, Libc.SOL_SOCKET);
      c.set(JAVA_INT, Libc.CMSG_TYPE, Libc.SCM_RIGHTS);
      for (int i = 0; i < count; i++) {
        c.set(JAVA_INT, Libc.CMSG_HEADER_BYTES + 4L * i, fds == null ? fdToPass : fds[i]);
      }
      if ((count & 1) != 0) {
        c.set(JAVA_INT, Libc.CMSG_HEADER_BYTES + 4L * count, 0); // CMSG_SPACE padding
      }
      m.set(JAVA_LONG, Libc.MSG_CONTROL, c.address());
      m.set(JAVA_LONG, Libc.MSG_CONTROLLEN, Libc.CMSG_HEADER_BYTES + Scratch.align8(4L * count)); // CMSG_SPACE
    } else {
      m.set(JAVA_LONG, Libc.MSG_CONTROL, 0L);
      m.set(JAVA_LONG, Libc.MSG_CONTROLLEN, 0L);
    }
    return Libc.sendmsg(s, fd, Libc.MSG_NOSIGNAL);
  }

  /**
   * Receives up to {@code len} bytes into {@code buf[offset..]}. A descriptor that arrived with
   * them is stored in {@code receivedFd[0]} (close-on-exec, now owned by the caller), else -1 is
   * stored there; descriptors beyond the first are closed. With a null {@code receivedFd} every
   * received descriptor is closed.
   *
   * @return bytes received, 0 on orderly EOF, or -1 when a non-blocking socket has nothing
   */
  public long receive(MemorySegment buf, long offset, long len, int[] receivedFd) throws ErrnoException {
    Objects.checkFromIndexSize(offset, len, buf.byteSize());
    if (buf.isReadOnly()) {
      throw new IllegalArgumentException("receive into a read-only segment");
    }
    if (receivedFd != null) {
      receivedFd[0] = -1;
    }
    Scratch s = Scratch.get();
    boolean direct = buf.isNative();
    long address;
    if (direct) {
      requireAlive(buf);
      address = buf.address() + offset;
    } else {
      len = Math.min(len, Scratch.BOUNCE_BYTES);
      address = s.bounce().address();
    }
    setIovec(s, address, len);
    MemorySegment m = s.msghdr;
    m.set(JAVA_LONG, Libc.MSG_CONTROL, s.control.address());
    m.set(JAVA_LONG, Libc.MSG_CONTROLLEN, Scratch.CONTROL_BYTES);
    long n = Libc.recvmsg(s, fd, Libc.MSG_CMSG_CLOEXEC);
    if (n < 0) {
      return n;
    }
    takeDescriptors(s, receivedFd);
    if (!direct && n > 0) {
      MemorySegment.copy(s.bounce(), 0, buf, offset, n);
    }
    return n;
  }

  private static void requireAlive(MemorySegment buf) {
    if (!buf.scope().isAlive()) {
      throw new IllegalStateException("segment's arena is already closed");
    }
  }

  private static void setIovec(Scratch s, long address, long len) {
    s.iovec.set(JAVA_LONG, 0, address);
    s.iovec.set(JAVA_LONG, 8, len);
    MemorySegment m = s.msghdr;
    m.set(JAVA_LONG, Libc.MSG_NAME, 0L);
    m.set(JAVA_INT, Libc.MSG_NAMELEN, 0);
    m.set(JAVA_LONG, Libc.MSG_IOV, s.iovec.address());
    m.set(JAVA_LONG, Libc.MSG_IOVLEN, 1L);
    m.set(JAVA_INT, Libc.MSG_FLAGS, 0);
  }

  /** Walks the control messages recvmsg returned: keeps the first SCM_RIGHTS fd, closes the rest. */
  private void takeDescriptors(Scratch s, int[] receivedFd) {
    MemorySegment m = s.msghdr;
    long controlLen = Math.min(m.get(JAVA_LONG, Libc.MSG_CONTROLLEN), Scratch.CONTROL_BYTES);
    if ((m.get(JAVA_INT, Libc.MSG_FLAGS) & Libc.MSG_CTRUNC) != 0) {
      LOG.log(Level.WARNING, "recvmsg on fd {0}: control data truncated, extra descriptors dropped", fd);
    }
    MemorySegment c = s.control;
    long at = 0;
    while (at + Libc.CMSG_HEADER_BYTES <= controlLen) {
      long cmsgLen = c.get(JAVA_LONG, at);
      if (cmsgLen < Libc.CMSG_HEADER_BYTES || cmsgLen > controlLen - at) {
        break;
      }
      if (c.get(JAVA_INT, at + Libc.CMSG_LEVEL) == Libc.SOL_SOCKET
          && c.get(JAVA_INT, at + Libc.CMSG_TYPE) == Libc.SCM_RIGHTS) {
        long count = (cmsgLen - Libc.CMSG_HEADER_BYTES) / 4;
        for (long i = 0; i < count; i++) {
          int received = c.get(JAVA_INT, at + Libc.CMSG_HEADER_BYTES + 4 * i);
          if (receivedFd != null && receivedFd[0] < 0) {
            receivedFd[0] = received;
          } else {
            LOG.log(receivedFd == null ? Level.DEBUG : Level.WARNING,
                "closing unwanted descriptor {0} received on fd {1}", received, fd);
            Fds.closeQuietly(received);
          }
        }
      }
      at += Scratch.align8(cmsgLen);
    }
  }

  /** The peer's pid, uid and gid as of connect (SO_PEERCRED). */
  public PeerCredentials peerCredentials() throws ErrnoException {
    if (tcp) {
      throw new ErrnoException("getsockopt", Errno.EPROTOTYPE, "no SO_PEERCRED on TCP (" + address + ")");
    }
    Scratch s = Scratch.get();
    int len = Libc.getsockopt(s, fd, Libc.SOL_SOCKET, Libc.SO_PEERCRED, s.word);
    if (len < Libc.UCRED_BYTES) {
      throw new ErrnoException("getsockopt", Errno.EINVAL, "SO_PEERCRED returned " + len + " bytes on fd " + fd);
    }
    return new PeerCredentials(s.word.get(JAVA_INT, 0), s.word.get(JAVA_INT, 4), s.word.get(JAVA_INT, 8));
  }

  /** shutdown(SHUT_RDWR): the peer sees EOF, a thread blocked in receive wakes with 0. */
  public void shutdown() throws ErrnoException {
    Libc.shutdown(Scratch.get(), fd, Libc.SHUT_RDWR);
  }

  /** Closes the descriptor; later calls do nothing. Failures are logged, not thrown. */
  @Override
  public void close() {
    int old = (int) FD.getAndSet(this, -1);
    Fds.closeQuietly(old);
  }

  @Override
  public String toString() {
    return (tcp ? "TcpSocket[fd=" : "UnixSocket[fd=") + fd + " " + address + "]";
  }
}
