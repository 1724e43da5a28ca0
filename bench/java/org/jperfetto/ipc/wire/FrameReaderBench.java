package org.jperfetto.ipc.wire;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.IPCFrame;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The frame read path without a socket: bytes as recvmsg leaves them in the reader's native buffer
 * (copied in, in reads of {@code readSize}), framed and parsed into IPCFrames. Per op = per frame.
 * Run with -prof gc: gc.alloc.rate.norm is the reader's allocation plus the protobuf message
 * objects; {@link #protobufOnly} measures the latter alone, for the difference.
 */
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FrameReaderBench {
  static final int FRAMES = 256;

  @Param({"4096", "65536"})
  int readSize;

  private Arena arena;
  private MemorySegment stream;
  private byte[] payload;
  private FrameReader reader;
  private Blackhole sinkHole;
  private final FrameSink sink = (frame, fd) -> sinkHole.consume(frame);

  @Setup(Level.Trial)
  public void setUp() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < FRAMES; i++) {
      IPCFrame frame = IPCFrame.newBuilder().setRequestId(1000 + i)
          .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder().setServiceId(1).setMethodId(4)
              .setArgsProto(ByteString.copyFrom(new byte[24])).setDropReply(true))
          .build();
      out.writeBytes(Frames.encode(frame));
      if (i == 0) {
        payload = java.util.Arrays.copyOfRange(out.toByteArray(), Frames.HEADER_SIZE, out.size());
      }
    }
    byte[] bytes = out.toByteArray();
    arena = Arena.ofShared();
    stream = arena.allocate(bytes.length);
    MemorySegment.copy(bytes, 0, stream, ValueLayout.JAVA_BYTE, 0, bytes.length);
    reader = new FrameReader(fd -> { });
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    reader.close();
    arena.close();
  }

  @Benchmark
  @OperationsPerInvocation(FRAMES)
  public void readFrames(Blackhole bh) {
    sinkHole = bh;
    long size = stream.byteSize();
    for (long pos = 0; pos < size; ) {
      long n = Math.min(Math.min(readSize, size - pos), reader.receiveSpace());
      MemorySegment.copy(stream, pos, reader.receiveBuffer(), reader.receiveOffset(), n);
      if (!reader.endReceive((int) n, -1, sink)) {
        throw new IllegalStateException(String.valueOf(reader.failure()));
      }
      pos += n;
    }
  }

  /** Parsing one frame's payload from a byte[]: the protobuf objects' own allocation. */
  @Benchmark
  public IPCFrame protobufOnly() throws Exception {
    return IPCFrame.parseFrom(payload);
  }
}
