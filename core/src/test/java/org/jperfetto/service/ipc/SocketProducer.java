package org.jperfetto.service.ipc;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.ipc.BoundService;
import org.jperfetto.ipc.IpcClient;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.ipc.Reply;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.GetAsyncCommandRequest;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.InitializeConnectionResponse;
import org.jperfetto.protos.RegisterDataSourceRequest;

/**
 * A minimal producer for tests over a real socket: IpcClient bound to ProducerPort,
 * InitializeConnection, RegisterDataSource, the GetAsyncCommand stream (the SMB fd of
 * setup_tracing is mapped), {@link SmbWriter}s and CommitData. Flush commands are acknowledged
 * with everything the writers completed, unless {@link #ackFlushes} is false.
 */
final class SocketProducer implements AutoCloseable {
  final IpcClient client;
  final BoundService port;
  final InitializeConnectionResponse init;
  final BlockingQueue<GetAsyncCommandResponse> commands = new LinkedBlockingQueue<>();
  final CompletableFuture<IpcException> disconnected = new CompletableFuture<>();
  final CompletableFuture<SharedMemoryAbi> smb = new CompletableFuture<>();
  /** Instance id -> the target buffer of its setup_data_source. */
  final Map<Long, Integer> targetBuffers = new ConcurrentHashMap<>();
  final List<SmbWriter> writers = new CopyOnWriteArrayList<>();
  volatile boolean ackFlushes = true;
  volatile int smbFdsReceived;
  private final Arena arena = Arena.ofShared();
  private boolean closed;

  private SocketProducer(IpcClient client, BoundService port, InitializeConnectionResponse init) {
    this.client = client;
    this.port = port;
    this.init = init;
  }

  static SocketProducer connect(String socket, String name, String... dataSources) throws Exception {
    return connect(socket, InitializeConnectionRequest.newBuilder().setProducerName(name).build(), -1,
        dataSources);
  }

  static SocketProducer connect(String socket, InitializeConnectionRequest req, int smbFd,
      String... dataSources) throws Exception {
    return connect(socket, req, smbFd, java.util.Arrays.stream(dataSources)
        .map(ds -> DataSourceDescriptor.newBuilder().setName(ds).build()).toList());
  }

  /** A producer named name registering the given data source descriptors. */
  static SocketProducer connect(String socket, String name, List<DataSourceDescriptor> dataSources)
      throws Exception {
    return connect(socket, InitializeConnectionRequest.newBuilder().setProducerName(name).build(), -1,
        dataSources);
  }

  static SocketProducer connect(String socket, InitializeConnectionRequest req, int smbFd,
      List<DataSourceDescriptor> dataSources) throws Exception {
    CompletableFuture<IpcException> gone = new CompletableFuture<>();
    IpcClient client = IpcClient.connect(socket, gone::complete);
    BoundService port = client.bind("ProducerPort").get(10, TimeUnit.SECONDS);
    Reply r = port.invoke("InitializeConnection", req.toByteString(), smbFd).get(10, TimeUnit.SECONDS);
    SocketProducer p = new SocketProducer(client, port, InitializeConnectionResponse.parseFrom(r.bytes()));
    gone.thenAccept(p.disconnected::complete);
    for (DataSourceDescriptor ds : dataSources) {
      p.port.invoke("RegisterDataSource", RegisterDataSourceRequest.newBuilder()
          .setDataSourceDescriptor(ds).build())
          .get(10, TimeUnit.SECONDS);
    }
    p.port.invokeStreaming("GetAsyncCommand", GetAsyncCommandRequest.getDefaultInstance().toByteString(),
        -1, p::onCommand);
    return p;
  }

  private void onCommand(Reply reply) {
    try {
      GetAsyncCommandResponse cmd = GetAsyncCommandResponse.parseFrom(reply.bytes());
      if (cmd.hasSetupTracing() && reply.fd() >= 0) {
        smbFdsReceived++;
        int pageSize = cmd.getSetupTracing().getSharedBufferPageSizeKb() * 1024;
        var mem = SharedMapping.map(reply.fd(), MemFd.size(reply.fd()), arena);
        smb.complete(new SharedMemoryAbi(mem, pageSize));
      } else if (cmd.hasSetupDataSource()) {
        targetBuffers.put(cmd.getSetupDataSource().getNewInstanceId(),
            cmd.getSetupDataSource().getConfig().getTargetBuffer());
      } else if (cmd.hasFlush() && ackFlushes) {
        CommitDataRequest.Builder req = CommitDataRequest.newBuilder()
            .setFlushRequestId(cmd.getFlush().getRequestId());
        writers.forEach(w -> w.drainInto(req));
        port.invoke("CommitData", req.build());
      }
      commands.add(cmd);
    } catch (Exception e) {
      commands.add(GetAsyncCommandResponse.getDefaultInstance());
      throw new IllegalStateException(e);
    } finally {
      Fds.closeQuietly(reply.fd());
    }
  }

  /** The next command of the given kind, skipping others; fails after 10 s. */
  GetAsyncCommandResponse await(GetAsyncCommandResponse.CmdCase kind) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      GetAsyncCommandResponse c = commands.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (c == null) {
        throw new AssertionError("no " + kind + " command within 10 s");
      }
      if (c.getCmdCase() == kind) {
        return c;
      }
    }
  }

  /** Waits for start_data_source and returns a writer into that instance's target buffer. */
  SmbWriter startedWriter(int writerId) throws Exception {
    GetAsyncCommandResponse start = await(GetAsyncCommandResponse.CmdCase.START_DATA_SOURCE);
    return writer(writerId, start.getStartDataSource().getConfig().getTargetBuffer());
  }

  SmbWriter writer(int writerId, int targetBuffer) throws Exception {
    SmbWriter w = new SmbWriter(smb.get(10, TimeUnit.SECONDS), writerId, targetBuffer);
    writers.add(w);
    return w;
  }

  /** ActivateTriggers with these names; waits for the reply. */
  void activateTriggers(String... names) throws Exception {
    port.invoke("ActivateTriggers", org.jperfetto.protos.ActivateTriggersRequest.newBuilder()
        .addAllTriggerNames(List.of(names)).build()).get(10, TimeUnit.SECONDS);
  }

  /** NotifyDataSourceStarted for an instance whose descriptor set will_notify_on_start. */
  void notifyStarted(long instanceId) throws Exception {
    port.invoke("NotifyDataSourceStarted", org.jperfetto.protos.NotifyDataSourceStartedRequest.newBuilder()
        .setDataSourceId(instanceId).build()).get(10, TimeUnit.SECONDS);
  }

  /** Fails if a command of this kind arrives within ms (other commands are consumed). */
  void expectNo(GetAsyncCommandResponse.CmdCase kind, long ms) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      GetAsyncCommandResponse c = commands.poll(left, TimeUnit.NANOSECONDS);
      if (c != null && c.getCmdCase() == kind) {
        throw new AssertionError("unexpected " + kind + ": " + c);
      }
    }
  }

  /** CommitData with everything the writers completed; waits for the reply. */
  void commit() throws Exception {
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    writers.forEach(w -> w.drainInto(req));
    port.invoke("CommitData", req.build()).get(10, TimeUnit.SECONDS);
  }

  @Override
  public synchronized void close() {
    client.close();
    if (!closed) {
      closed = true;
      arena.close();
    }
  }
}
