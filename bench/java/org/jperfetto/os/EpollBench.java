package org.jperfetto.os;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The event loop's own costs, single-threaded: an epoll_wait that finds one readable socket, and a
 * wakeup (eventfd write) followed by the await that drains it. Both should allocate 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EpollBench {
  private Epoll epoll;
  private Epoll quiet;
  private UnixSocket[] pair;
  private Arena arena;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    arena = Arena.ofConfined();
    pair = UnixSocket.pair();
    MemorySegment one = arena.allocate(1);
    pair[0].send(one, 0, 1, -1); // stays unread: level-triggered readiness on every await
    epoll = Epoll.create();
    epoll.add(pair[1].fd(), Epoll.IN, 42L);
    quiet = Epoll.create();
  }

  @Benchmark
  public long awaitOneReady() throws ErrnoException {
    int n = epoll.await(0);
    return n == 1 ? epoll.token(0) : -1;
  }

  @Benchmark
  public boolean wakeupThenAwait() throws ErrnoException {
    quiet.wakeup();
    quiet.await(0);
    return quiet.wokenUp();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    epoll.close();
    quiet.close();
    pair[0].close();
    pair[1].close();
    arena.close();
  }
}
