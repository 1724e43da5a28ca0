package org.jperfetto.service.ipc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.Varints;
import org.jperfetto.ipc.wire.FrameReader;
import org.jperfetto.ipc.wire.FrameSink;
import org.jperfetto.ipc.wire.RawInvoke;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.ClientIdentity;
import org.jperfetto.service.ClockSource;
import org.jperfetto.service.ConsumerCallbacks;
import org.jperfetto.service.ConsumerEndpoint;
import org.jperfetto.service.ProducerCallbacks;
import org.jperfetto.service.ProducerEndpoint;
import org.jperfetto.service.SharedMemory;
import org.jperfetto.service.TaskRunner;
import org.jperfetto.service.TracingService;

/**
 * jtraced's JIT warm-up: right after the sockets are served, a low-priority thread drives a
 * private {@link TracingService} through the path a producer's burst takes (chunks written into a
 * memfd SMB, CommitData read in place by {@link CommitDataDecoder}, chunks copied and patched into
 * a trace buffer, the buffer read out), so that the JIT has compiled that path before the first
 * real producer fills its SMB. A cold JVM otherwise runs the first burst in the interpreter and
 * while its compiler threads take the core the producer's own IPC thread needs, and a 256 KiB SMB
 * fills in about 2 ms: the first burst into a fresh jtraced lost up to 45 % of a C++ app's slices.
 *
 * <p>Nothing of it is visible outside: its service has no socket, its producer and consumer are
 * objects in this process, and everything is released at the end.
 */
final class IngestWarmUp {
  private static final System.Logger LOG = System.getLogger(IngestWarmUp.class.getName());
  static final String DATA_SOURCE = "jtraced.warmup";
  static final int SMB_SIZE = 256 * 1024;
  static final int PAGE_SIZE = 4096;
  static final int BUFFER_KB = 1024;
  /**
   * Rounds between two reads. The burst does not wait for the read path (it runs after), so the
   * warm-up spends little on it; the ring buffer overwrites what is not read.
   */
  static final int READ_EVERY = 50;
  static final int CLOCK_SNAPSHOTS = 2_000;

  private IngestWarmUp() {}

  /**
   * Starts the warm-up on a daemon thread of minimum priority; returns it. It stops early, keeping
   * what the JIT compiled so far, once stop says so (a real session started: the warm-up must not
   * take the CPU that session's producers need).
   */
  static Thread start(ClockSource clocks, int rounds, BooleanSupplier stop) {
    Thread t = Thread.ofPlatform().name("jtraced-warmup").daemon().priority(Thread.MIN_PRIORITY)
        .unstarted(() -> {
          try {
            run(clocks, rounds, stop);
          } catch (RuntimeException | Error e) {
            LOG.log(Level.DEBUG, "JIT warm-up stopped: " + e);
          }
        });
    t.start();
    return t;
  }

  /** What a warm-up did: for tests and for the log. */
  record Result(long chunksCommitted, long patchesApplied, long bytesRead) {}

  /** Runs rounds rounds of fill-commit-read on the calling thread. */
  static Result run(ClockSource clocks, int rounds) {
    return run(clocks, rounds, () -> false);
  }

  /** As {@link #run(ClockSource, int)}, stopping at the next round once stop says so. */
  static Result run(ClockSource clocks, int rounds, BooleanSupplier stop) {
    DirectRunner runner = new DirectRunner();
    TracingService service = new TracingService(runner, MemfdSharedMemory.factory(), clocks, 0);
    service.useBufferMemory(ServiceHost::lazyBufferMemory);
    Producer producer = new Producer();
    Consumer consumer = new Consumer();
    ProducerEndpoint endpoint = service.connectProducer(producer, new ClientIdentity(0, 0),
        "jtraced-warmup", SMB_SIZE, PAGE_SIZE, Optional.empty(), "jtraced-warmup");
    endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName(DATA_SOURCE).build());
    ConsumerEndpoint session = service.connectConsumer(consumer, 0);
    try (Arena arena = Arena.ofConfined()) {
      // The request buffer: native, as the IPC frame buffer a real CommitData is read from.
      MemorySegment request = arena.allocate(64 * 1024, 8);
      Receiver receiver = new Receiver(endpoint);
      Writers writers = new Writers();
      long committed = 0;
      long patches = 0;
      // Both fill policies, as sessions ask for either: the first half into a 1 MiB ring, the
      // second into a DISCARD buffer large enough for it (its memory is committed as written).
      for (int half = 0; half < 2; half++) {
        boolean ring = half == 0;
        int halfRounds = ring ? rounds / 2 : rounds - rounds / 2;
        long bufferKb = ring ? BUFFER_KB : Math.max(BUFFER_KB, (long) halfRounds * SMB_SIZE / 1024 + 1024);
        String error = session.enableTracing(TraceConfig.newBuilder()
            .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb((int) bufferKb)
                .setFillPolicy(ring ? TraceConfig.BufferConfig.FillPolicy.RING_BUFFER
                    : TraceConfig.BufferConfig.FillPolicy.DISCARD))
            .addDataSources(TraceConfig.DataSource.newBuilder()
                .setConfig(DataSourceConfig.newBuilder().setName(DATA_SOURCE)))
            .build(), Optional.empty());
        runner.drain();
        if (!error.isEmpty() || producer.smb == null || producer.targetBuffer < 0) {
          throw new IllegalStateException("warm-up session did not start: " + error);
        }
        for (int w = 1; w <= WRITERS; w++) {
          endpoint.registerTraceWriter(w, producer.targetBuffer);
        }
        SharedMemoryAbi abi = new SharedMemoryAbi(producer.smb.segment(), PAGE_SIZE);
        for (int round = 0; round < halfRounds && !stop.getAsBoolean(); round++) {
          // One CommitData per chunk, as a busy SDK sends them (a chunk or two each): the
          // per-request code runs as often as the per-chunk code and gets compiled as early.
          for (int page = 0; page < abi.numPages(); page++) {
            int writer = page % WRITERS + 1;
            if (!writers.fillChunk(abi, page, writer)) {
              continue;
            }
            int length = move(request, 0, page, producer.targetBuffer);
            committed++;
            if (writer == 1 && round % 4 == 3 && page < WRITERS) {
              // a patch for the chunk, as a writer that fragmented a packet sends
              length = patch(request, length, producer.targetBuffer, 1, writers.lastChunkId(1));
              patches++;
            }
            if (page == abi.numPages() - 1) {
              length = putTag(request, length, 3 << 3); // flush_request_id
              length = putVarint(request, length, 0);
            }
            receiver.receive(request, length);
            runner.drain();
          }
          if (round % READ_EVERY == READ_EVERY - 1 || round == halfRounds - 1) {
            session.readBuffers(); // the read path's classes and first compiles
            runner.drain();
          }
        }
        session.disableTracing();
        runner.drain();
        session.freeBuffers();
        runner.drain();
        producer.targetBuffer = -1;
      }
      // The clock snapshot a session starts with: compiled, its brackets are tens of ns wide.
      for (int i = 0; i < CLOCK_SNAPSHOTS && !stop.getAsBoolean(); i++) {
        clocks.snapshot();
      }
      receiver.close();
      endpoint.disconnect();
      session.disconnect();
      runner.drain();
      return new Result(committed, patches, consumer.bytes);
    }
  }

  /**
   * The socket side of a CommitData without the socket: the request framed as a producer sends it
   * (length prefix, IPCFrame with InvokeMethod, drop_reply), fed through a {@link FrameReader} to
   * {@link RawInvoke} and the {@link CommitDataDecoder}, the path jtraced's IPC host takes.
   */
  private static final class Receiver implements FrameSink {
    private final ProducerEndpoint endpoint;
    private final FrameReader reader = new FrameReader(fd -> { });
    private final RawInvoke invoke = new RawInvoke();
    private final CommitDataDecoder decoder = new CommitDataDecoder();
    private final byte[] frame = new byte[64 * 1024 + 32];
    private long requestId;

    Receiver(ProducerEndpoint endpoint) {
      this.endpoint = endpoint;
    }

    void close() {
      reader.close();
    }

    void receive(MemorySegment args, int length) {
      int at = 4;
      frame[at++] = 2 << 3; // request_id
      at = Varints.put(frame, at, ++requestId);
      frame[at++] = 5 << 3 | 2; // msg_invoke_method
      int invokeLength = 2 + 2 + 1 + Varints.size(length) + length + 2;
      at = Varints.put(frame, at, invokeLength);
      frame[at++] = 1 << 3; // service_id 1 (ProducerPort)
      frame[at++] = 1;
      frame[at++] = 2 << 3; // method_id 4 (CommitData)
      frame[at++] = 4;
      frame[at++] = 3 << 3 | 2; // args_proto
      at = Varints.put(frame, at, length);
      MemorySegment.copy(args, ValueLayout.JAVA_BYTE, 0, frame, at, length);
      at += length;
      frame[at++] = 4 << 3; // drop_reply
      frame[at++] = 1;
      MemorySegment.ofArray(frame).set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN),
          0, at - 4);
      if (!reader.feed(frame, 0, at, -1, this)) {
        throw new IllegalStateException("warm-up frame refused: " + reader.failure());
      }
    }

    @Override
    public boolean onRawFrame(MemorySegment buffer, long offset, int length) {
      if (!invoke.read(buffer, offset, length)
          || !decoder.apply(buffer, invoke.argsOffset(), invoke.argsLength(), endpoint)) {
        throw new IllegalStateException("warm-up CommitData not taken");
      }
      return true;
    }

    @Override
    public void onFrame(IPCFrame frame, int fd) {
      throw new IllegalStateException("warm-up frame decoded by protobuf");
    }

  }

  /** Writers taking turns at the pages, as a producer's threads do. */
  private static final int WRITERS = 3;
  /** A TracePacket as a TrackEvent slice with an int debug arg looks (interned name, delta time). */
  private static final byte[] PACKET = {
      0x40, (byte) 0xe8, 0x07, // timestamp
      0x5a, 0x0c, // track_event {
      0x48, 0x01, 0x50, 0x01, // type, name_iid
      0x22, 0x04, 0x08, 0x01, 0x20, 0x2a, // debug_annotations { name_iid, int_value }
      0x58, 0x00, // (padding varint field 11)
      0x68, 0x02, // sequence_flags
  };
  /** Where a packet split across two chunks is cut. */
  private static final int SPLIT = 9;

  /**
   * The writers' chunks, shaped as the C++ SDK's are: fragment sizes of 1 byte and of 4 (the
   * redundant varint a writer reserves), and every fourth chunk of a writer ends with a packet
   * that its next chunk finishes.
   */
  private static final class Writers {
    private final int[] nextChunkId = new int[WRITERS + 1];
    private final boolean[] continues = new boolean[WRITERS + 1];

    int lastChunkId(int writer) {
      return nextChunkId[writer] - 1;
    }

    /** Writes one chunk of writer into page's only chunk and marks it complete. */
    boolean fillChunk(SharedMemoryAbi abi, int page, int writer) {
      if (abi.isPageFree(page)) {
        abi.tryPartitionPage(page, PageLayout.DIV1);
      }
      int chunkId = nextChunkId[writer];
      boolean first = continues[writer];
      boolean last = chunkId % 4 == 3;
      int flags = (first ? ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK : 0)
          | (last ? ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK : 0);
      int payload = abi.chunkSizeForLayoutBits(PageLayout.DIV1.bits()) - ChunkHeader.SIZE;
      // Room: the continuation (4 + rest), whole packets of 1- or 4-byte sizes, the split head.
      int room = payload - (first ? 4 + PACKET.length - SPLIT : 0) - (last ? 4 + SPLIT : 0);
      int whole = Math.min(room / (PACKET.length + 4), ChunkHeader.MAX_PACKET_COUNT - 2);
      int packets = whole + (first ? 1 : 0) + (last ? 1 : 0);
      long chunk = abi.tryAcquireChunkForWriting(page, 0, chunkId, writer, ChunkHeader.packets(packets, flags));
      if (chunk == ChunkHandle.INVALID) {
        return false;
      }
      MemorySegment smb = abi.segment();
      long at = abi.payloadOffset(chunk);
      if (first) {
        at = fragment(smb, at, SPLIT, PACKET.length - SPLIT, true);
      }
      for (int i = 0; i < whole; i++) {
        at = fragment(smb, at, 0, PACKET.length, i % 2 == 1);
      }
      if (last) {
        fragment(smb, at, 0, SPLIT, true);
      }
      abi.releaseChunkAsComplete(chunk);
      nextChunkId[writer] = chunkId + 1;
      continues[writer] = last;
      return true;
    }

    /** PACKET[from, from + n) behind its size, as a 4-byte redundant varint or one byte. */
    private static long fragment(MemorySegment smb, long at, int from, int n, boolean fourByteSize) {
      if (fourByteSize) {
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) (n | 0x80));
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) 0x80);
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) 0x80);
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) 0x00);
      } else {
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) n);
      }
      MemorySegment.copy(PACKET, from, smb, ValueLayout.JAVA_BYTE, at, n);
      return at + n;
    }
  }

  private static int move(MemorySegment out, int at, int page, int targetBuffer) {
    at = putTag(out, at, 1 << 3 | 2); // chunks_to_move
    at = putVarint(out, at, 1 + Varints.size(page) + 1 + 1 + 1 + Varints.size(targetBuffer));
    at = putTag(out, at, 1 << 3);
    at = putVarint(out, at, page);
    at = putTag(out, at, 2 << 3);
    at = putVarint(out, at, 0);
    at = putTag(out, at, 3 << 3);
    return putVarint(out, at, targetBuffer);
  }

  /**
   * chunks_to_patch { target_buffer, writer_id, chunk_id, patches { offset 0, data } } rewriting
   * the chunk's first size field with what it holds (the chunk stays valid): a continuation's
   * 4-byte size when the chunk has one, else the first 4 bytes of its first whole packet.
   */
  private static int patch(MemorySegment out, int at, int targetBuffer, int writer, int chunkId) {
    at = putTag(out, at, 2 << 3 | 2);
    int inner = 1 + Varints.size(targetBuffer) + 2 + 1 + Varints.size(chunkId) + 2 + 8;
    at = putVarint(out, at, inner);
    at = putTag(out, at, 1 << 3);
    at = putVarint(out, at, targetBuffer);
    at = putTag(out, at, 2 << 3);
    at = putVarint(out, at, writer);
    at = putTag(out, at, 3 << 3);
    at = putVarint(out, at, chunkId);
    at = putTag(out, at, 4 << 3 | 2);
    at = putVarint(out, at, 8);
    at = putTag(out, at, 1 << 3);
    at = putVarint(out, at, 0);
    at = putTag(out, at, 2 << 3 | 2);
    at = putVarint(out, at, 4);
    boolean continuation = chunkId % 4 == 0 && chunkId > 0;
    if (continuation) {
      int n = PACKET.length - SPLIT;
      out.set(ValueLayout.JAVA_BYTE, at, (byte) (n | 0x80));
      out.set(ValueLayout.JAVA_BYTE, at + 1, (byte) 0x80);
      out.set(ValueLayout.JAVA_BYTE, at + 2, (byte) 0x80);
      out.set(ValueLayout.JAVA_BYTE, at + 3, (byte) 0x00);
    } else {
      out.set(ValueLayout.JAVA_BYTE, at, (byte) PACKET.length);
      MemorySegment.copy(PACKET, 0, out, ValueLayout.JAVA_BYTE, at + 1, 3);
    }
    return at + 4;
  }

  private static int putTag(MemorySegment out, int at, int tag) {
    return putVarint(out, at, tag);
  }

  private static int putVarint(MemorySegment out, int at, long v) {
    while ((v & ~0x7fL) != 0) {
      out.set(ValueLayout.JAVA_BYTE, at++, (byte) (v & 0x7f | 0x80));
      v >>>= 7;
    }
    out.set(ValueLayout.JAVA_BYTE, at++, (byte) v);
    return at;
  }


  /** The warm-up's service thread is the warm-up thread; delayed tasks never run. */
  private static final class DirectRunner implements TaskRunner {
    private final Thread owner = Thread.currentThread();
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    @Override
    public void post(Runnable task) {
      tasks.add(task);
    }

    @Override
    public Cancellable postDelayed(Runnable task, long delayMs) {
      return () -> { };
    }

    @Override
    public boolean isOnRunnerThread() {
      return Thread.currentThread() == owner;
    }

    void drain() {
      for (Runnable r; (r = tasks.poll()) != null; ) {
        r.run();
      }
    }
  }

  private static final class Producer implements ProducerCallbacks {
    SharedMemory smb;
    int targetBuffer = -1;

    @Override
    public void setupTracing(SharedMemory memory, int pageSizeKb) {
      smb = memory;
    }

    @Override
    public void setupDataSource(long instanceId, DataSourceConfig config) {
      targetBuffer = config.getTargetBuffer();
    }

    @Override
    public void startDataSource(long instanceId, DataSourceConfig config) {
      targetBuffer = config.getTargetBuffer();
    }

    @Override
    public void stopDataSource(long instanceId) {}

    @Override
    public void flush(long requestId, long[] dataSourceInstanceIds, long flags) {}

    @Override
    public void clearIncrementalState(long[] dataSourceInstanceIds) {}

    @Override
    public void onDisconnectedByService(String reason) {}
  }

  private static final class Consumer implements ConsumerCallbacks {
    long bytes;

    @Override
    public void onTracingDisabled(String error) {}

    @Override
    public void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore) {
      for (ReadBuffersResponse.Slice s : slices) {
        bytes += s.getData().size();
      }
    }
  }
}
