package org.jperfetto.service.ipc;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jperfetto.abi.ChunkHandle;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.Varints;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.HostStats;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.ipc.Reply;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.JitSettle;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.DisableTracingRequest;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.FreeBuffersRequest;
import org.jperfetto.protos.GetAsyncCommandRequest;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.GetTraceStatsRequest;
import org.jperfetto.protos.GetTraceStatsResponse;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.NotifyDataSourceStartedRequest;
import org.jperfetto.protos.NotifyDataSourceStoppedRequest;
import org.jperfetto.protos.ReadBuffersRequest;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.RegisterTraceWriterRequest;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.service.ClockSource;

/**
 * jtraced's JIT warm-up, run before its own sockets exist: a private service on sockets in a
 * private temp directory, fed by a producer that speaks the wire protocol as the C++ SDK does under
 * a burst, so that the JIT has compiled the whole ingest path (epoll wake-up, recvmsg, frame
 * decoding, CommitData read in place, chunk copy, patches, chunk release) before the first real
 * producer fills its SMB.
 *
 * <p>Why it is needed: a 256 KiB SMB fills in about 2 ms of a C++ app's burst. A cold JVM runs the
 * first bursts interpreted or in C1 code while its C2 thread takes the core the service's loop
 * needs; measured on 2 cores, the first three 1M-slice bursts into a fresh jtraced each lost 5 to
 * 20 % more than the fourth. The traffic is shaped from what traced's own stats show for that
 * burst: mostly one writer's chunks, one to three per CommitData, most chunks ending with a
 * packet the next chunk finishes and whose size the next CommitData patches (8116 chunks carried
 * 6443 patches), fragment sizes of 1 and 4 bytes.
 *
 * <p>Nothing of it is visible outside: its sockets are in a directory only this user can enter and
 * are removed at the end, with everything else it made.
 */
final class IngestWarmUp {
  private static final System.Logger LOG = System.getLogger(IngestWarmUp.class.getName());
  static final String DATA_SOURCE = "jtraced.warmup";
  static final int SMB_SIZE = 256 * 1024;
  static final int PAGE_SIZE = 4096;
  static final int RING_BUFFER_KB = 1024;
  /** Rounds between two reads: the burst's read-out comes after it, so that path gets little. */
  static final int READ_EVERY = 40;
  /** How long one step may wait for the private service before the warm-up gives up. */
  private static final long STEP_TIMEOUT_MS = 5_000;

  private IngestWarmUp() {}

  /**
   * What a warm-up did: for tests and for the log. pacedRequests were each sent once the service
   * had taken the one before; producerReceives and consumerAccepted are the private service's
   * socket reads on its producer socket and connections accepted on its consumer socket;
   * producerReadCaps its readiness events that used up a connection's reads.
   */
  record Result(long chunksCommitted, long patchesSent, long bytesRead, TraceStats.BufferStats discardStats,
      int notificationsAcknowledged, long pacedRequests, long producerReceives, long consumerAccepted,
      long producerReadCaps) {}

  /**
   * Runs up to rounds rounds (one SMB of chunks each; half into a ring buffer, half into a DISCARD
   * one), stopping early once stop says so or deadlineNanos (System.nanoTime) passes.
   *
   * @throws IOException if the private service cannot be started or stops answering
   */
  static Result run(ClockSource clocks, int rounds, long deadlineNanos, BooleanSupplier stop) throws IOException {
    return run(clocks, rounds, Traffic.BULK, deadlineNanos, stop);
  }

  static Result run(ClockSource clocks, int rounds, Traffic traffic, long deadlineNanos, BooleanSupplier stop)
      throws IOException {
    Path dir = Files.createTempDirectory("jtraced-warmup"); // 0700
    String producerSocket = dir.resolve("p").toString();
    String consumerSocket = dir.resolve("c").toString();
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket)
            .withClocks(clocks));
        IpcClient consumerClient = IpcClient.connect(consumerSocket);
        IpcClient producerClient = IpcClient.connect(producerSocket);
        Arena arena = Arena.ofShared()) {
      BoundService consumer = await(consumerClient.bind("ConsumerPort"));
      BoundService port = await(producerClient.bind("ProducerPort"));
      Commands commands = new Commands(port);
      await(port.invoke("InitializeConnection", InitializeConnectionRequest.newBuilder()
          .setSharedMemoryPageSizeHintBytes(PAGE_SIZE).setSharedMemorySizeHintBytes(SMB_SIZE)
          .setProducerName("jtraced-warmup").build()));
      port.invokeStreaming("GetAsyncCommand", GetAsyncCommandRequest.getDefaultInstance().toByteString(), -1,
          commands::onReply);
      await(port.invoke("RegisterDataSource", RegisterDataSourceRequest.newBuilder()
          .setDataSourceDescriptor(DataSourceDescriptor.newBuilder().setName(DATA_SOURCE)
              // As the SDKs register theirs: their NotifyDataSourceStarted reaches the service as the
              // app's burst begins, so that request's first handling must not be part of the burst.
              .setWillNotifyOnStart(true).setWillNotifyOnStop(true)).build()));
      Feeder feeder = new Feeder(port, traffic, deadlineNanos, stop);
      long bytesRead = 0;
      int notifications = 0;
      TraceStats.BufferStats discardStats = null;
      for (int half = 0; half < 2 && !feeder.stopped(); half++) {
        boolean ring = half == 0;
        int halfRounds = ring ? rounds / 2 : rounds - rounds / 2;
        long bufferKb = ring ? RING_BUFFER_KB : (long) halfRounds * SMB_SIZE / 1024 * 2 + 1024;
        commands.reset();
        // The ring half reads once a wake-up: each read then ends as when a peer that keeps sending
        // used up its reads, which a real burst's CommitData may do too. The DISCARD half reads until
        // the socket is empty, as most reads of a real service end.
        host.readsPerEvent(ring ? WARM_UP_READS_PER_EVENT : IpcHost.DEFAULT_READS_PER_EVENT);
        CompletableFuture<Reply> session = consumer.invoke("EnableTracing", EnableTracingRequest.newBuilder()
            .setTraceConfig(TraceConfig.newBuilder()
                // What the perfetto CLI adds to every config it sends.
                .setStatsdLogging(TraceConfig.StatsdLogging.STATSD_LOGGING_DISABLED)
                .setStatsdMetadata(TraceConfig.StatsdMetadata.getDefaultInstance())
                .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb((int) bufferKb)
                    .setFillPolicy(ring ? TraceConfig.BufferConfig.FillPolicy.RING_BUFFER
                        : TraceConfig.BufferConfig.FillPolicy.DISCARD))
                .addDataSources(TraceConfig.DataSource.newBuilder()
                    .setConfig(DataSourceConfig.newBuilder().setName(DATA_SOURCE))))
            .build());
        int target = await(commands.started);
        if (commands.smb == null || commands.smbChanged) {
          commands.smbChanged = false;
          commands.smb = mapSmb(commands.smbFd, arena);
        }
        SharedMemoryAbi abi = new SharedMemoryAbi(commands.smb, PAGE_SIZE);
        feeder.newSession();
        // Writers 2 and 3 are registered, writer 1 is not: the SDKs register theirs, but a
        // RegisterTraceWriter may come after the writer's first commit (the Java producer's does).
        for (int w = 2; w <= Writers.COUNT; w++) {
          await(port.invoke("RegisterTraceWriter", RegisterTraceWriterRequest.newBuilder()
              .setTraceWriterId(w).setTargetBuffer(target).build()));
        }
        for (int round = 0; round < halfRounds && !feeder.stopped(); round++) {
          if (traffic == Traffic.PACED) {
            exerciseLoop(host.runner(), consumerSocket);
          }
          feeder.round(abi, target);
          if (round % READ_EVERY == READ_EVERY - 1 || round == halfRounds - 1) {
            bytesRead += read(consumer);
          }
        }
        feeder.settle(abi);
        if (!ring) {
          bytesRead += read(consumer);
          discardStats = GetTraceStatsResponse.parseFrom(await(consumer.invoke("GetTraceStats",
              GetTraceStatsRequest.getDefaultInstance())).bytes()).getTraceStats().getBufferStats(0);
        }
        await(consumer.invoke("DisableTracing", DisableTracingRequest.getDefaultInstance()));
        await(session);
        await(commands.startAcked);
        await(commands.stopAcked);
        notifications += 2;
        await(consumer.invoke("FreeBuffers", FreeBuffersRequest.getDefaultInstance()));
      }
      HostStats producerStats = host.producerHostStats();
      return new Result(feeder.committed, feeder.patches, bytesRead, discardStats, notifications, feeder.pacedRequests,
          producerStats.receives(), host.consumerHostStats().accepted(), producerStats.readCapHits());
    } finally {
      try (var files = Files.list(dir)) {
        files.forEach(f -> f.toFile().delete());
      }
      Files.deleteIfExists(dir);
    }
  }

  /** How the feeder sends its requests. */
  enum Traffic {
    /** As fast as it can write them: the service reads several requests at a time. */
    BULK,
    /**
     * Each request once the service has freed its chunks, in three rounds of four: one read and one
     * wake-up a request, as a real burst mostly comes to a service that keeps up.
     */
    PACED
  }

  /**
   * Reads a wake-up in the ring half of each warm-up pass: one, so that each of those reads leaves
   * the read loop the way a read whose peer kept sending does (the DISCARD half leaves it when the
   * socket is empty, as most reads of a real service do). With the default cap alone, that way out
   * was so rare in the warm-up that C2 compiled it as never taken, and the first time it was taken
   * (late in one warm-up in twelve, seen with -Xlog:deoptimization) the loop went back to C1 and
   * reached C2 again only during the first burst, 0.13 s of a core in it.
   */
  static final int WARM_UP_READS_PER_EVENT = 1;

  private static final Runnable[] NO_OPS = {() -> { }, () -> { }, () -> { }};

  /**
   * What a real service's loop meets besides commits, so that C2, which compiles the loop's
   * dispatch from the paced passes' profile, does not bet against it: a client that connects and
   * hangs up (the accept handler next to the connections' and the client side's, and the read that
   * finds the end of the stream), tasks of more than two kinds, and a timer cancelled before it is
   * due. Without it, each of those first met in a real session threw the compiled loop code away
   * (a bimorphic type check or a never-taken branch) and C2 compiled it again during the burst.
   */
  private static void exerciseLoop(LoopTaskRunner runner, String consumerSocket) throws IOException {
    try {
      UnixSocket.connect(consumerSocket).close();
    } catch (ErrnoException e) {
      throw new IOException("warm-up: connecting to its own consumer socket: " + e.getMessage(), e);
    }
    for (Runnable task : NO_OPS) {
      runner.post(task);
    }
    runner.postDelayed(NO_OPS[0], 0).cancel();
  }

  /** Warm-ups ended in this process, however they ended: tests tell "before" from "after" by it. */
  static final AtomicInteger FINISHED = new AtomicInteger();

  /**
   * jtraced's whole warm-up: {@code rounds} rounds of bulk traffic, then a wait for the JIT
   * compilers to go quiet ({@link JitSettle}); then, while the last pass still made them work,
   * another pass of {@code extraRounds} of paced traffic and another wait, at most {@code
   * maxExtraPasses} times. The extra passes are for what bulk traffic leaves at a low tier: methods
   * the JIT compiled at C1 without profiling while its queue was long, which reach their final code
   * only from traffic after it drained, and the event loop's per-wake-up methods, which bulk
   * traffic calls a few hundred times (one read takes many requests) where a real burst calls them
   * thousands of times. Without them, C2 compiled those during the first real bursts, at the cost
   * of the service's core (seen: 0.35 s of C2 in a 1M burst; later, a dip in the third burst into
   * a warm service). Each pass keeps to maxMillis, each wait to settleMillis, and all of it to
   * totalMillis. Failures are logged (debug).
   */
  static void untilCompiled(ClockSource clocks, int rounds, int extraRounds, int maxExtraPasses,
      long maxMillis, long settleMillis, long totalMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(totalMillis);
    try {
      runQuietly(clocks, rounds, Traffic.BULK, Math.min(maxMillis, millisLeft(deadline)));
      JitSettle.Compilers jit = JitSettle.Compilers.ofThisJvm();
      JitSettle.Result settled = jit.await(Math.min(settleMillis, millisLeft(deadline)));
      LOG.log(Level.DEBUG, () -> "JIT warm-up: compilers " + settled);
      for (int pass = 0; pass < maxExtraPasses && jit.known() && millisLeft(deadline) > 0; pass++) {
        long before = jit.ticks();
        runQuietly(clocks, extraRounds, Traffic.PACED, Math.min(maxMillis, millisLeft(deadline)));
        JitSettle.Result again = jit.await(Math.min(settleMillis, millisLeft(deadline)));
        long work = jit.ticks() - before;
        int n = pass + 1;
        LOG.log(Level.DEBUG, () -> "JIT warm-up: extra pass " + n + " cost the compilers " + work + " ticks; " + again);
        if (work <= QUIET_PASS_TICKS) {
          break;
        }
      }
    } finally {
      FINISHED.incrementAndGet();
    }
  }

  private static long millisLeft(long deadlineNanos) {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
  }

  /** Compiler CPU (clock ticks) below which a pass counts as having compiled nothing worth another. */
  static final long QUIET_PASS_TICKS = 2;

  /** As {@link #run(ClockSource, int, long, BooleanSupplier)}, logging instead of throwing. */
  static void runQuietly(ClockSource clocks, int rounds, Traffic traffic, long maxMillis) {
    long start = System.nanoTime();
    try {
      Result r = run(clocks, rounds, traffic, start + TimeUnit.MILLISECONDS.toNanos(maxMillis), () -> false);
      LOG.log(Level.DEBUG, () -> "JIT warm-up (" + traffic + "): " + r.chunksCommitted() + " chunks, "
          + r.patchesSent() + " patches, " + r.producerReceives() + " reads in "
          + (System.nanoTime() - start) / 1_000_000 + " ms");
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "JIT warm-up stopped: " + e);
    }
  }

  private static MemorySegment mapSmb(int fd, Arena arena) throws IOException {
    if (fd < 0) {
      throw new IOException("warm-up: setup_tracing came without a shared memory fd");
    }
    try {
      long size = MemFd.size(fd);
      if (size != SMB_SIZE) {
        throw new IOException("warm-up: unexpected SMB size " + size);
      }
      return SharedMapping.map(fd, size, arena);
    } catch (ErrnoException e) {
      throw new IOException("warm-up: mapping the SMB: " + e.getMessage(), e);
    } finally {
      Fds.closeQuietly(fd);
    }
  }

  /** ReadBuffers through the consumer port; the bytes read. */
  private static long read(BoundService consumer) throws IOException {
    long[] bytes = {0};
    await(consumer.invokeStreaming("ReadBuffers", ReadBuffersRequest.getDefaultInstance().toByteString(), -1,
        reply -> {
          try {
            for (ReadBuffersResponse.Slice slice : ReadBuffersResponse.parseFrom(reply.bytes()).getSlicesList()) {
              bytes[0] += slice.getData().size();
            }
          } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("warm-up: malformed ReadBuffersResponse", e);
          }
        }));
    return bytes[0];
  }

  private static <T> T await(CompletableFuture<T> f) throws IOException {
    try {
      return f.get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException("warm-up: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("warm-up: the private service did not answer in " + STEP_TIMEOUT_MS + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("warm-up interrupted");
    }
  }

  /**
   * The producer's GetAsyncCommand stream, on the client's I/O thread; it acknowledges starts and
   * stops there, as the SDKs' IPC thread does.
   */
  private static final class Commands {
    private final BoundService port;
    volatile CompletableFuture<Integer> started = new CompletableFuture<>();
    volatile CompletableFuture<Void> startAcked = new CompletableFuture<>();
    volatile CompletableFuture<Void> stopAcked = new CompletableFuture<>();
    volatile int smbFd = -1;
    volatile boolean smbChanged;
    MemorySegment smb;

    Commands(BoundService port) {
      this.port = port;
    }

    void reset() {
      started = new CompletableFuture<>();
      startAcked = new CompletableFuture<>();
      stopAcked = new CompletableFuture<>();
    }

    void onReply(Reply reply) {
      GetAsyncCommandResponse cmd;
      try {
        cmd = GetAsyncCommandResponse.parseFrom(reply.bytes());
      } catch (InvalidProtocolBufferException e) {
        Fds.closeQuietly(reply.fd());
        started.completeExceptionally(e);
        return;
      }
      if (cmd.hasSetupTracing()) {
        Fds.closeQuietly(smbFd);
        smbFd = reply.fd();
        smbChanged = true;
      } else {
        Fds.closeQuietly(reply.fd());
      }
      if (cmd.hasStartDataSource()) {
        acknowledge(startAcked, port.invoke("NotifyDataSourceStarted", NotifyDataSourceStartedRequest.newBuilder()
            .setDataSourceId(cmd.getStartDataSource().getNewInstanceId()).build()));
        started.complete(cmd.getStartDataSource().getConfig().getTargetBuffer());
      }
      if (cmd.hasStopDataSource()) {
        acknowledge(stopAcked, port.invoke("NotifyDataSourceStopped", NotifyDataSourceStoppedRequest.newBuilder()
            .setDataSourceId(cmd.getStopDataSource().getInstanceId()).build()));
      }
    }

    private static void acknowledge(CompletableFuture<Void> acked, CompletableFuture<Reply> reply) {
      reply.whenComplete((r, e) -> {
        if (e != null) {
          acked.completeExceptionally(e);
        } else {
          acked.complete(null);
        }
      });
    }
  }

  /**
   * Writes the chunks and sends the CommitData requests: the writer thread of a busy SDK app and
   * its IPC thread in one.
   */
  private static final class Feeder {
    private final BoundService port;
    private final Traffic traffic;
    private int rounds;
    private final long deadlineNanos;
    private final BooleanSupplier stop;
    private Writers writers = new Writers();
    private final byte[] request = new byte[512];
    private boolean stopped;
    private long requests;
    long pacedRequests;
    long committed;
    long patches;

    Feeder(BoundService port, Traffic traffic, long deadlineNanos, BooleanSupplier stop) {
      this.port = port;
      this.traffic = traffic;
      this.deadlineNanos = deadlineNanos;
      this.stop = stop;
    }

    /** A new session: its writers start their sequences afresh, owing no patch. */
    void newSession() {
      writers = new Writers();
    }

    boolean stopped() {
      if (!stopped && (stop.getAsBoolean() || System.nanoTime() - deadlineNanos > 0)) {
        stopped = true;
      }
      return stopped;
    }

    /**
     * One SMB of chunks, each page once, in order, mostly writer 1's as in a one-thread app;
     * requests of one to three chunks, each with the patches its writers owe.
     */
    void round(SharedMemoryAbi abi, int target) throws IOException {
      boolean paced = traffic == Traffic.PACED && rounds++ % 4 != 3;
      int length = 0;
      int inRequest = 0;
      for (int page = 0; page < abi.numPages(); page++) {
        if (!awaitFree(abi, page, SPINS)) {
          return;
        }
        // Writer 2 most of the time; 3 and 1 now and then, so that the service meets them in an
        // order that is not their ids' (its sequences are kept sorted).
        int writer = page % 4 != 3 ? 2 : page % 8 == 3 ? 3 : 1;
        if (writers.patchesOwed(writer) == 2 || writers.patchesOwed(writer) == 1 && page % 2 == 0) {
          for (int i = 0; i < writers.patchesOwed(writer); i++) {
            length = patch(request, length, target, writer, writers.patchChunkId(writer, i),
                writers.patchOffset(writer, i));
            patches++;
          }
          writers.patchesSent(writer);
        }
        writers.fillChunk(abi, page, writer);
        length = move(request, length, page, target);
        committed++;
        inRequest++;
        requests++;
        int chunksPerRequest = 1 + (requests % 3 == 2 ? 1 : 0) + (requests % 7 == 6 ? 1 : 0);
        if (inRequest >= chunksPerRequest || page == abi.numPages() - 1) {
          port.invokeNoReply("CommitData", request, 0, length);
          length = 0;
          inRequest = 0;
          if (paced) {
            if (!awaitFree(abi, page, PACED_SPINS)) {
              return;
            }
            pacedRequests++;
          }
        }
      }
    }

    /** Waits until the service has freed every page (its chunks copied). */
    void settle(SharedMemoryAbi abi) {
      for (int page = 0; page < abi.numPages(); page++) {
        if (!awaitFree(abi, page, SPINS)) {
          return;
        }
      }
    }

    /** Spins before a nap while waiting for a page of the next round (a whole round later). */
    private static final int SPINS = 200;
    /**
     * Spins before a nap while waiting for the request just sent to be taken: about one round trip
     * through the service, shorter than a nap (parkNanos sleeps 50 us or more).
     */
    private static final int PACED_SPINS = 20_000;

    /** Spins, then naps, until page is free; false if the warm-up is to stop or times out. */
    private boolean awaitFree(SharedMemoryAbi abi, int page, int spinsFirst) {
      long start = 0;
      for (int spins = 0; !abi.isPageFree(page); spins++) {
        if (spins < spinsFirst) {
          Thread.onSpinWait();
          continue;
        }
        if (start == 0) {
          start = System.nanoTime();
        } else if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS)) {
          throw new IllegalStateException("warm-up: the private service does not free its chunks");
        }
        if (stopped()) {
          return false;
        }
        LockSupport.parkNanos(20_000);
      }
      return true;
    }
  }

  /** A TracePacket as a TrackEvent slice with an int debug arg looks (interned name, delta time). */
  private static final byte[] PACKET = {
      0x40, (byte) 0xe8, 0x07, // timestamp
      0x5a, 0x0c, // track_event {
      0x48, 0x01, 0x50, 0x01, // type, name_iid
      0x22, 0x04, 0x08, 0x01, 0x20, 0x2a, // debug_annotations { name_iid, int_value }
      0x58, 0x00, // (padding varint field 11)
      0x68, 0x02, // sequence_flags
  };
  /** The fragment size a writer puts at the end of a chunk after it dropped data (2^28 - 1). */
  private static final int DROP_PACKET_SIZE = (1 << 28) - 1;
  /** Where a packet split across two chunks is cut. */
  private static final int SPLIT = 9;

  /**
   * The writers' chunks, shaped as the C++ SDK's are under a burst: fragment sizes of 1 byte and
   * of 4 (the redundant varint a writer reserves); most chunks end with a packet that the writer's
   * next chunk finishes, flagged as needing a patch of that fragment's size, which a later
   * CommitData carries (one or two chunks later); one chunk in eleven ends with the drop marker a
   * writer leaves when it found no free chunk.
   */
  private static final class Writers {
    static final int COUNT = 3;
    private final int[] nextChunkId = new int[COUNT + 1];
    private final boolean[] continues = new boolean[COUNT + 1];
    private final int[][] owedChunkIds = new int[COUNT + 1][2];
    private final int[][] owedOffsets = new int[COUNT + 1][2];
    private final int[] owed = new int[COUNT + 1];

    int patchesOwed(int writer) {
      return owed[writer];
    }

    int patchChunkId(int writer, int i) {
      return owedChunkIds[writer][i];
    }

    int patchOffset(int writer, int i) {
      return owedOffsets[writer][i];
    }

    void patchesSent(int writer) {
      owed[writer] = 0;
    }

    /** Writes one chunk of writer into page's only chunk (the page is free) and marks it complete. */
    void fillChunk(SharedMemoryAbi abi, int page, int writer) {
      abi.tryPartitionPage(page, PageLayout.DIV1);
      int chunkId = nextChunkId[writer];
      boolean first = continues[writer];
      boolean dropped = chunkId % 11 == 10;
      // A split packet owes a patch: at most two are owed at a time (round() pays them).
      boolean last = !dropped && chunkId % 5 != 4 && owed[writer] < 2;
      int flags = (first ? ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK : 0)
          | (last ? ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK | ChunkHeader.CHUNK_NEEDS_PATCHING : 0);
      int payload = abi.chunkSizeForLayoutBits(PageLayout.DIV1.bits()) - ChunkHeader.SIZE;
      // Room: the continuation (4 + rest), whole packets of 1- or 4-byte sizes, the split head or
      // the drop marker.
      int room = payload - (first ? 4 + PACKET.length - SPLIT : 0) - (last ? 4 + SPLIT : 0) - (dropped ? 4 : 0);
      int whole = Math.min(room / (PACKET.length + 4), ChunkHeader.MAX_PACKET_COUNT - 3);
      int packets = whole + (first ? 1 : 0) + (last || dropped ? 1 : 0);
      long chunk = abi.tryAcquireChunkForWriting(page, 0, chunkId, writer, ChunkHeader.packets(packets, flags));
      if (chunk == ChunkHandle.INVALID) {
        throw new IllegalStateException("warm-up: a free page's chunk cannot be acquired");
      }
      MemorySegment smb = abi.segment();
      long begin = abi.payloadOffset(chunk);
      long at = begin;
      if (first) {
        at = fragment(smb, at, SPLIT, PACKET.length - SPLIT, true);
      }
      for (int i = 0; i < whole; i++) {
        at = fragment(smb, at, 0, PACKET.length, i % 2 == 1);
      }
      if (last) {
        owedChunkIds[writer][owed[writer]] = chunkId;
        owedOffsets[writer][owed[writer]] = (int) (at - begin);
        owed[writer]++;
        fragment(smb, at, 0, SPLIT, true);
      } else if (dropped) {
        putRedundantSize(smb, at, DROP_PACKET_SIZE);
      }
      abi.releaseChunkAsComplete(chunk);
      nextChunkId[writer] = chunkId + 1;
      continues[writer] = last;
    }

    /** PACKET[from, from + n) behind its size, as a 4-byte redundant varint or one byte. */
    private static long fragment(MemorySegment smb, long at, int from, int n, boolean fourByteSize) {
      if (fourByteSize) {
        at = putRedundantSize(smb, at, n);
      } else {
        smb.set(ValueLayout.JAVA_BYTE, at++, (byte) n);
      }
      MemorySegment.copy(PACKET, from, smb, ValueLayout.JAVA_BYTE, at, n);
      return at + n;
    }
  }

  /** n (below 2^28) as a 4-byte varint. */
  private static long putRedundantSize(MemorySegment out, long at, int n) {
    out.set(ValueLayout.JAVA_BYTE, at, (byte) (n & 0x7f | 0x80));
    out.set(ValueLayout.JAVA_BYTE, at + 1, (byte) (n >>> 7 & 0x7f | 0x80));
    out.set(ValueLayout.JAVA_BYTE, at + 2, (byte) (n >>> 14 & 0x7f | 0x80));
    out.set(ValueLayout.JAVA_BYTE, at + 3, (byte) (n >>> 21 & 0x7f));
    return at + 4;
  }

  /** chunks_to_move { page, chunk 0, target_buffer }. */
  private static int move(byte[] out, int at, int page, int targetBuffer) {
    at = Varints.put(out, at, 1 << 3 | 2);
    at = Varints.put(out, at, 1 + Varints.size(page) + 1 + 1 + 1 + Varints.size(targetBuffer));
    at = Varints.put(out, at, 1 << 3);
    at = Varints.put(out, at, page);
    at = Varints.put(out, at, 2 << 3);
    at = Varints.put(out, at, 0);
    at = Varints.put(out, at, 3 << 3);
    return Varints.put(out, at, targetBuffer);
  }

  /**
   * chunks_to_patch { target_buffer, writer_id, chunk_id, patches { offset, data } } writing the
   * split fragment's 4-byte size at offset with the value it already holds (SPLIT), as an SDK
   * writes a size it learned after committing the chunk.
   */
  private static int patch(byte[] out, int at, int targetBuffer, int writer, int chunkId, int offset) {
    at = Varints.put(out, at, 2 << 3 | 2);
    int patchLength = 1 + Varints.size(offset) + 2 + 4;
    int inner = 1 + Varints.size(targetBuffer) + 1 + Varints.size(writer) + 1 + Varints.size(chunkId) + 1
        + Varints.size(patchLength) + patchLength;
    at = Varints.put(out, at, inner);
    at = Varints.put(out, at, 1 << 3);
    at = Varints.put(out, at, targetBuffer);
    at = Varints.put(out, at, 2 << 3);
    at = Varints.put(out, at, writer);
    at = Varints.put(out, at, 3 << 3);
    at = Varints.put(out, at, chunkId);
    at = Varints.put(out, at, 4 << 3 | 2);
    at = Varints.put(out, at, patchLength);
    at = Varints.put(out, at, 1 << 3);
    at = Varints.put(out, at, offset);
    at = Varints.put(out, at, 2 << 3 | 2);
    at = Varints.put(out, at, 4);
    return (int) putRedundantSize(MemorySegment.ofArray(out), at, SPLIT);
  }
}
