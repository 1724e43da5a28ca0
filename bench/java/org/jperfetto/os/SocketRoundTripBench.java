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
 * Ping-pong of a 64-byte message over an AF_UNIX stream socket between the benchmark thread and an
 * echo thread: one op is sendmsg + the echo's recvmsg + sendmsg + our recvmsg. With {@code -prof
 * gc}, {@code gc.alloc.rate.norm} should be ~0 B/op (it counts the echo thread too).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SocketRoundTripBench {
  private static final int MESSAGE = 64;

  private Arena arena;
  private UnixSocket ping;
  private UnixSocket pong;
  private MemorySegment out;
  private MemorySegment in;
  private Thread echo;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    arena = Arena.ofShared();
    String name = "@jperfetto-bench-" + ProcessHandle.current().pid();
    try (UnixSocket listener = UnixSocket.listen(name, 1)) {
      ping = UnixSocket.connect(name);
      pong = listener.accept();
    }
    out = arena.allocate(MESSAGE, 64);
    in = arena.allocate(MESSAGE, 64);
    MemorySegment echoBuf = arena.allocate(MESSAGE, 64);
    echo = Thread.ofPlatform().name("echo").daemon().start(() -> runEcho(echoBuf));
  }

  private void runEcho(MemorySegment buf) {
    try {
      while (true) {
        if (!readFully(pong, buf)) {
          return; // EOF: the trial is over
        }
        writeFully(pong, buf);
      }
    } catch (ErrnoException e) {
      // the benchmark side closed mid-message at teardown
    }
  }

  private static boolean readFully(UnixSocket s, MemorySegment buf) throws ErrnoException {
    long got = 0;
    while (got < MESSAGE) {
      long n = s.receive(buf, got, MESSAGE - got, null);
      if (n <= 0) {
        return false;
      }
      got += n;
    }
    return true;
  }

  private static void writeFully(UnixSocket s, MemorySegment buf) throws ErrnoException {
    long sent = 0;
    while (sent < MESSAGE) {
      sent += s.send(buf, sent, MESSAGE - sent, -1);
    }
  }

  @Benchmark
  public long roundTrip64() throws ErrnoException {
    writeFully(ping, out);
    if (!readFully(ping, in)) {
      throw new IllegalStateException("echo thread went away");
    }
    return in.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws InterruptedException {
    try {
      ping.shutdown();
    } catch (ErrnoException e) {
      throw new IllegalStateException(e);
    }
    echo.join(5000);
    ping.close();
    pong.close();
    arena.close();
  }
}
