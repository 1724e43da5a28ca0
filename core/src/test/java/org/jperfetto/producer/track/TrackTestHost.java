package org.jperfetto.producer.track;

import com.google.protobuf.ByteString;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jperfetto.abi.ChunkReadResult;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.UntrustedChunkReader;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.MethodHandler;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.ipc.ServiceListener;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.NotifyDataSourceStartedRequest;
import org.jperfetto.protos.ProducerPortOuterClass;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.service.buffer.OverwritePolicy;
import org.jperfetto.service.buffer.Patch;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * The service's side of the producer socket, enough for TrackEvent tests until the real ServiceHost
 * lands: answers the ProducerPort calls, sends setup_tracing with a sealed memfd and the data source
 * commands, moves committed chunks into a real {@link TraceBuffer} (patches applied) and reads the
 * packets back per sequence (writer id).
 */
final class TrackTestHost implements AutoCloseable {
  /** A packet read back, with the writer (sequence) it came on. */
  record Packet(int writerId, TracePacket packet, int size) {}

  private final IpcHost host;
  private final List<String> registered = new ArrayList<>();
  /** Instance ids of NotifyDataSourceStarted, in order. */
  private final List<Long> startsAcked = new ArrayList<>();
  private final List<CommitDataRequest> held = new ArrayList<>();
  private boolean paused;
  private final List<Packet> packets = new ArrayList<>();
  private volatile MethodCall asyncCommands;
  private MemorySegment smb;
  private SharedMemoryAbi abi;
  private UntrustedChunkReader reader;
  private TraceBuffer buffer;
  private long badChunks;
  private long badPatches;

  TrackTestHost(String socketPath) throws Exception {
    Map<String, MethodHandler> handlers = new HashMap<>();
    handlers.put("InitializeConnection", call -> call.reply(ByteString.EMPTY));
    handlers.put("RegisterDataSource", call -> {
      synchronized (this) {
        registered.add(RegisterDataSourceRequest.parseFrom(call.args()).getDataSourceDescriptor().getName());
      }
      call.reply(ByteString.EMPTY);
    });
    handlers.put("GetAsyncCommand", call -> asyncCommands = call);
    handlers.put("NotifyDataSourceStarted", call -> {
      synchronized (this) {
        startsAcked.add(NotifyDataSourceStartedRequest.parseFrom(call.args()).getDataSourceId());
      }
      call.reply(ByteString.EMPTY);
    });
    handlers.put("CommitData", call -> {
      commit(CommitDataRequest.parseFrom(call.args()));
      call.reply(ByteString.EMPTY);
    });
    MethodHandler ok = call -> call.reply(ByteString.EMPTY);
    ServiceDefinition.Builder b = ServiceDefinition.builder("ProducerPort");
    for (ServiceDefinition.Method m : ServiceDefinition.fromDescriptor(
        ProducerPortOuterClass.getDescriptor().findServiceByName("ProducerPort"), handlers,
        new ServiceListener() {}).methods()) {
      b.method(m.name(), handlers.getOrDefault(m.name(), ok));
    }
    host = IpcHost.start(socketPath, List.of(b.build()));
  }

  synchronized List<String> registered() {
    return List.copyOf(registered);
  }

  /** The instance ids the producer said it started (NotifyDataSourceStarted), in order. */
  synchronized List<Long> startsAcked() {
    return List.copyOf(startsAcked);
  }

  /** Waits for the producer's GetAsyncCommand, then sends setup_tracing with a fresh SMB. */
  void setUpTracing(int pages, int pageSize, long bufferBytes) throws Exception {
    await("GetAsyncCommand", () -> asyncCommands != null);
    long size = (long) pages * pageSize;
    int fd = MemFd.create("perfetto_shmem", size);
    MemFd.addSeals(fd, MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL);
    synchronized (this) {
      smb = SharedMapping.map(fd, size, Arena.ofAuto());
      abi = new SharedMemoryAbi(smb, pageSize);
      reader = new UntrustedChunkReader(abi);
      buffer = TraceBuffer.create(bufferBytes, OverwritePolicy.DISCARD);
    }
    send(GetAsyncCommandResponse.newBuilder().setSetupTracing(GetAsyncCommandResponse.SetupTracing.newBuilder()
        .setSharedBufferPageSizeKb(pageSize / 1024)).build(), fd);
  }

  /**
   * Sets up and starts instance id, as the only instance of a session of its own (whose id, as a
   * real service's, goes into the config: a producer tells two sessions' setups apart by it).
   */
  void startDataSource(long id, TrackEventConfig config) {
    DataSourceConfig dsc = DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0)
        .setTracingSessionId(id).setTrackEventConfig(config).build();
    send(GetAsyncCommandResponse.newBuilder().setSetupDataSource(GetAsyncCommandResponse.SetupDataSource
        .newBuilder().setNewInstanceId(id).setConfig(dsc)).build(), -1);
    send(GetAsyncCommandResponse.newBuilder().setStartDataSource(GetAsyncCommandResponse.StartDataSource
        .newBuilder().setNewInstanceId(id).setConfig(dsc)).build(), -1);
  }

  /**
   * A session as upstream traced runs it for a producer with several registrations of track_event:
   * one setup_data_source per registration (instance ids, one config, the same for all, with the
   * fields traced fills in), and once all are set up one start_data_source each.
   */
  void startSession(long sessionId, TrackEventConfig config, long... ids) {
    DataSourceConfig dsc = DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0)
        .setTracingSessionId(sessionId).setTraceDurationMs(0).setStopTimeoutMs(5000)
        .setEnableExtraGuardrails(false).setTrackEventConfig(config).build();
    for (long id : ids) {
      send(GetAsyncCommandResponse.newBuilder().setSetupDataSource(GetAsyncCommandResponse.SetupDataSource
          .newBuilder().setNewInstanceId(id).setConfig(dsc)).build(), -1);
    }
    for (long id : ids) {
      send(GetAsyncCommandResponse.newBuilder().setStartDataSource(GetAsyncCommandResponse.StartDataSource
          .newBuilder().setNewInstanceId(id).setConfig(dsc)).build(), -1);
    }
  }

  void stopDataSource(long id) {
    send(GetAsyncCommandResponse.newBuilder().setStopDataSource(
        GetAsyncCommandResponse.StopDataSource.newBuilder().setInstanceId(id)).build(), -1);
  }

  void clearIncrementalState(long id) {
    send(GetAsyncCommandResponse.newBuilder().setClearIncrementalState(
        GetAsyncCommandResponse.ClearIncrementalState.newBuilder().addDataSourceIds(id)).build(), -1);
  }

  private void send(GetAsyncCommandResponse cmd, int fd) {
    asyncCommands.send(cmd.toByteString(), true, fd);
  }

  /** Holds CommitData requests unapplied (their chunks stay in use, as with a service that stopped reading). */
  synchronized void pauseReading() {
    paused = true;
  }

  /** Applies the held requests and reads on as before. */
  synchronized void resumeReading() {
    paused = false;
    for (CommitDataRequest req : held) {
      commit(req);
    }
    held.clear();
  }

  private synchronized void commit(CommitDataRequest req) {
    if (paused) {
      held.add(req);
      return;
    }
    for (CommitDataRequest.ChunksToMove m : req.getChunksToMoveList()) {
      if (reader.acquireCommitted(m.getPage(), m.getChunk()) != ChunkReadResult.OK) {
        badChunks++;
        continue;
      }
      buffer.copyChunkUntrusted(1, 1000, 42, reader.writerId(), reader.chunkId(), reader.packetCount(),
          reader.flags(), true, abi.segment(), reader.payloadOffset(), reader.payloadSize());
      reader.releaseAsFree();
    }
    for (CommitDataRequest.ChunkToPatch p : req.getChunksToPatchList()) {
      List<Patch> patches = new ArrayList<>();
      for (CommitDataRequest.ChunkToPatch.Patch x : p.getPatchesList()) {
        patches.add(new Patch(x.getOffset(), x.getData().toByteArray()));
      }
      if (!buffer.tryPatchChunkContents(1, p.getWriterId(), p.getChunkId(), patches, p.getHasMorePatches())) {
        badPatches++;
      }
    }
  }

  /** Every packet read so far plus what the buffer holds now. */
  synchronized List<Packet> packets() throws Exception {
    if (buffer != null) {
      buffer.beginRead();
      BufferedPacket p = new BufferedPacket();
      while (buffer.readNextTracePacket(p)) {
        byte[] bytes = p.toByteArray();
        packets.add(new Packet(p.writerId(), TracePacket.parseFrom(bytes), bytes.length));
      }
    }
    return List.copyOf(packets);
  }

  /** Waits until some packet read back satisfies condition; returns all packets then. */
  List<Packet> awaitPacket(String what, Predicate<TracePacket> condition) throws Exception {
    return awaitPackets(what, 1, condition);
  }

  /** Waits until at least count packets match (one per writer sequence, e.g. a marker per session). */
  List<Packet> awaitPackets(String what, int count, Predicate<TracePacket> condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      List<Packet> all = packets();
      if (all.stream().filter(p -> condition.test(p.packet())).count() >= count) {
        return all;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; have " + all.size() + " packets");
      }
      Thread.sleep(5);
    }
  }

  synchronized long badChunks() {
    return badChunks;
  }

  synchronized long badPatches() {
    return badPatches;
  }

  static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(5);
    }
  }

  @Override
  public synchronized void close() {
    host.close();
    if (buffer != null) {
      buffer.close();
    }
  }
}
