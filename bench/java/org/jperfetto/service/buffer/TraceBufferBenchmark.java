package org.jperfetto.service.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jperfetto.wire.Varints;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * TraceBuffer ingest and read-out with 4 KiB SMB pages (one chunk per page: 4080-byte payload
 * holding 40 packets of ~100 bytes). Scores are operations per second; one operation is one chunk,
 * so GB/s = ops/s x 4080 / 1e9. {@link #memcpyBaseline} is the same copy without the buffer's
 * bookkeeping, for the "within 2x of memcpy" budget.
 *
 * <pre>
 * ./mvnw -B -Pbench verify -Djmh.args="TraceBufferBenchmark -prof gc -f 1 -wi 3 -w 1s -i 5 -r 1s"
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class TraceBufferBenchmark {
  static final int PAYLOAD = 4096 - 16;
  static final int PACKETS_PER_CHUNK = 40;
  static final long BUFFER_SIZE = 64L << 20;
  static final int READ_CHUNKS = 4096; // 16 MiB per read invocation

  /** An SMB page's chunk payload: PACKETS_PER_CHUNK fragments with 4-byte size varints. */
  static MemorySegment smbPage(Arena arena) {
    MemorySegment smb = arena.allocate(4096, 64);
    long at = 16;
    int size = PAYLOAD / PACKETS_PER_CHUNK - 4;
    for (int i = 0; i < PACKETS_PER_CHUNK; i++) {
      int len = i == PACKETS_PER_CHUNK - 1 ? (int) (4096 - at - 4) : size;
      Varints.writeRedundant(smb, at, len);
      at += 4 + len;
    }
    return smb;
  }

  /** A ring buffer fed by 1 or 4 writers whose chunks interleave. */
  @State(Scope.Thread)
  public abstract static class Feed {
    @Param({"1", "4"})
    int writers;

    Arena arena;
    MemorySegment smb;
    TraceBuffer tb;
    int[] nextChunkId;
    int n;

    @Setup(Level.Trial)
    public void setUpFeed() {
      arena = Arena.ofShared();
      smb = smbPage(arena);
      tb = TraceBuffer.create(BUFFER_SIZE, OverwritePolicy.RING_BUFFER);
      nextChunkId = new int[writers];
    }

    void copyOne() {
      int w = n++ % writers;
      tb.copyChunkUntrusted(1, 1000, 42, w + 1, nextChunkId[w]++, PACKETS_PER_CHUNK, 0, true, smb,
          16, PAYLOAD);
    }

    @TearDown(Level.Trial)
    public void tearDownFeed() {
      tb.close();
      arena.close();
    }
  }

  @State(Scope.Thread)
  public static class CopyState extends Feed {
    final Arena ringArena = Arena.ofShared();
    final MemorySegment ring = ringArena.allocate(BUFFER_SIZE, 64);
    long ringPos;

    @TearDown(Level.Trial)
    public void tearDownRing() {
      ringArena.close();
    }
  }

  /** One 4 KiB chunk into the ring buffer; with 4 writers, their chunks interleave. */
  @Benchmark
  public void copyChunk(CopyState s) {
    s.copyOne();
  }

  /** The bare copy of the same bytes into a ring of the same size. */
  @Benchmark
  public void memcpyBaseline(CopyState s) {
    long at = s.ringPos;
    MemorySegment.copy(s.smb, 16, s.ring, at, PAYLOAD);
    at += 4096;
    s.ringPos = at == BUFFER_SIZE ? 0 : at;
  }

  @State(Scope.Thread)
  public static class ReadState extends Feed {
    final BufferedPacket packet = new BufferedPacket();

    /** Reads are destructive: refill with READ_CHUNKS unread chunks before each read. */
    @Setup(Level.Invocation)
    public void refill() {
      for (int i = 0; i < READ_CHUNKS; i++) {
        copyOne();
      }
    }
  }

  /** ReadBuffers' inner loop: every packet of READ_CHUNKS chunks (score is per chunk). */
  @Benchmark
  @OperationsPerInvocation(READ_CHUNKS)
  public void readChunks(ReadState s, Blackhole bh) {
    TraceBuffer tb = s.tb;
    BufferedPacket p = s.packet;
    tb.beginRead();
    long bytes = 0;
    while (tb.readNextTracePacket(p)) {
      bytes += p.size();
    }
    bh.consume(bytes);
  }
}
