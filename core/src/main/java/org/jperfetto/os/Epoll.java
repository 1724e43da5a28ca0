package org.jperfetto.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An epoll instance for one event-loop thread, level-triggered, with a built-in eventfd so any
 * thread can {@link #wakeup()} a blocked {@link #await}.
 *
 * <p>Each registered fd carries a caller-chosen {@code long} token. {@link #await} fills internal
 * arrays read back with {@link #token(int)} and {@link #events(int)}: nothing is allocated per
 * wait. Only the loop thread calls {@code await}; {@code add}/{@code modify}/{@code remove} and
 * {@code wakeup} are safe from any thread (the kernel serialises them).
 */
public final class Epoll implements AutoCloseable {
  public static final int IN = 0x1;
  public static final int OUT = 0x4;
  public static final int ERR = 0x8;
  public static final int HUP = 0x10;
  public static final int RDHUP = 0x2000;

  public static final int DEFAULT_MAX_EVENTS = 64;
  /** Reserved for the wakeup eventfd; not accepted as a caller token. */
  public static final long WAKEUP_TOKEN = Long.MIN_VALUE;

  private final int epfd;
  private final int wakeFd;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment ready;
  private final int maxEvents;
  private final long[] tokens;
  private final int[] events;
  private boolean wokenUp;
  private volatile boolean closed;
  /** Wakeups between their closed check and their write; close waits for them (fd reuse). */
  private final AtomicInteger wakeupsInFlight = new AtomicInteger();

  private Epoll(int epfd, int wakeFd, int maxEvents) {
    this.epfd = epfd;
    this.wakeFd = wakeFd;
    this.maxEvents = maxEvents;
    this.ready = arena.allocate(Libc.EPOLL_EVENT_BYTES * maxEvents, 8);
    this.tokens = new long[maxEvents];
    this.events = new int[maxEvents];
  }

  public static Epoll create() throws ErrnoException {
    return create(DEFAULT_MAX_EVENTS);
  }

  /** An epoll reporting at most {@code maxEvents} ready descriptors per {@link #await}. */
  public static Epoll create(int maxEvents) throws ErrnoException {
    if (maxEvents < 1) {
      throw new IllegalArgumentException("maxEvents must be positive: " + maxEvents);
    }
    Scratch s = Scratch.get();
    int epfd = Libc.epollCreate(s);
    int wakeFd = -1;
    try {
      wakeFd = Libc.eventfd(s, Libc.EFD_CLOEXEC | Libc.EFD_NONBLOCK);
      ctl(s, epfd, Libc.EPOLL_CTL_ADD, wakeFd, IN, WAKEUP_TOKEN);
      return new Epoll(epfd, wakeFd, maxEvents);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(wakeFd);
      Fds.closeQuietly(epfd);
      throw e;
    }
  }

  /** The epoll descriptor itself (it can be nested in another epoll). */
  public int fd() {
    return epfd;
  }

  /** Watches {@code fd} for {@code events} (e.g. {@code IN | RDHUP}); {@code await} reports {@code token}. */
  public void add(int fd, int events, long token) throws ErrnoException {
    ctl(Scratch.get(), epfd, Libc.EPOLL_CTL_ADD, fd, events, checkToken(token));
  }

  public void modify(int fd, int events, long token) throws ErrnoException {
    ctl(Scratch.get(), epfd, Libc.EPOLL_CTL_MOD, fd, events, checkToken(token));
  }

  /** Stops watching {@code fd}. Do it before closing fd: a dup'd descriptor would keep it registered. */
  public void remove(int fd) throws ErrnoException {
    ctl(Scratch.get(), epfd, Libc.EPOLL_CTL_DEL, fd, 0, 0L);
  }

  private static long checkToken(long token) {
    if (token == WAKEUP_TOKEN) {
      throw new IllegalArgumentException("token Long.MIN_VALUE is reserved for the wakeup eventfd");
    }
    return token;
  }

  private static void ctl(Scratch s, int epfd, int op, int fd, int events, long token) throws ErrnoException {
    MemorySegment ev = s.word; // 16 bytes: room for the x86_64 (12) and aarch64 (16) layouts
    ev.set(JAVA_INT, 0, events);
    ev.set(JAVA_LONG_UNALIGNED, Libc.EPOLL_DATA, token);
    Libc.epollCtl(s, epfd, op, fd, ev);
  }

  /**
   * Waits up to {@code timeoutMillis} (-1: forever, 0: poll) and returns how many registered
   * descriptors are ready; read them with {@link #token(int)} and {@link #events(int)}. A wakeup
   * or a signal can return 0 early: see {@link #wokenUp()}.
   */
  public int await(int timeoutMillis) throws ErrnoException {
    Scratch s = Scratch.get();
    int n = Libc.epollWait(s, epfd, ready, maxEvents, timeoutMillis);
    int count = 0;
    wokenUp = false;
    for (int i = 0; i < n; i++) {
      long at = i * Libc.EPOLL_EVENT_BYTES;
      long token = ready.get(JAVA_LONG_UNALIGNED, at + Libc.EPOLL_DATA);
      if (token == WAKEUP_TOKEN) {
        wokenUp = true;
        drainWakeup(s);
        continue;
      }
      tokens[count] = token;
      events[count] = ready.get(JAVA_INT, at);
      count++;
    }
    return count;
  }

  /** Token of the {@code i}-th ready descriptor of the last {@link #await}. */
  public long token(int i) {
    return tokens[i];
  }

  /** Ready events ({@link #IN}, {@link #OUT}, ...) of the {@code i}-th descriptor of the last await. */
  public int events(int i) {
    return events[i];
  }

  /** Whether the last {@link #await} was (also) woken by {@link #wakeup()}. */
  public boolean wokenUp() {
    return wokenUp;
  }

  /**
   * Makes a blocked or the next {@link #await} return; callable from any thread, also during or
   * after {@link #close()} (then it does nothing).
   */
  public void wakeup() throws ErrnoException {
    wakeupsInFlight.incrementAndGet();
    try {
      if (closed) {
        return;
      }
      Scratch s = Scratch.get();
      s.word.set(JAVA_LONG, 0, 1L);
      Libc.write(s, wakeFd, s.word, 8); // -1 (counter saturated) still leaves it readable: fine
    } finally {
      wakeupsInFlight.decrementAndGet();
    }
  }

  private void drainWakeup(Scratch s) throws ErrnoException {
    Libc.read(s, wakeFd, s.word, 8);
  }

  /**
   * Closes the epoll and wakeup descriptors; registered fds are left open. Idempotent. Call it from
   * the loop thread, or once that thread has left {@link #await}.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    while (wakeupsInFlight.get() != 0) {
      Thread.onSpinWait(); // a wakeup past its closed check must not write to a reused fd number
    }
    Fds.closeQuietly(wakeFd);
    Fds.closeQuietly(epfd);
    arena.close();
  }
}
