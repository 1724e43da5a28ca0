package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.NotifyDataSourceStoppedRequest;
import org.jperfetto.protos.ProducerPortOuterClass;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.RegisterTraceWriterRequest;

/**
 * A stand-in for the service's ProducerPort over a real socket: answers InitializeConnection,
 * records registrations, holds the GetAsyncCommand stream to push commands (setup_tracing with a
 * sealed memfd, start/stop/flush/clear) and feeds CommitData into a {@link ServiceSide}.
 * {@code legacy} leaves out Sync and UpdateDataSource, as an older service.
 */
final class FakeProducerHost implements AutoCloseable {
  final IpcHost host;
  final List<InitializeConnectionRequest> inits = new CopyOnWriteArrayList<>();
  final List<String> registeredDataSources = new CopyOnWriteArrayList<>();
  final List<RegisterTraceWriterRequest> writers = new CopyOnWriteArrayList<>();
  final List<Integer> unregisteredWriters = new CopyOnWriteArrayList<>();
  final List<CommitDataRequest> commits = new CopyOnWriteArrayList<>();
  final List<Long> started = new CopyOnWriteArrayList<>();
  final List<Long> stopped = new CopyOnWriteArrayList<>();
  final List<String> syncs = new CopyOnWriteArrayList<>();
  /** Every method invoked, in order, with its raw request. */
  final List<Map.Entry<String, com.google.protobuf.ByteString>> calls = new CopyOnWriteArrayList<>();
  private volatile MethodCall asyncCommands;
  volatile ServiceSide service;

  FakeProducerHost(String socketPath, boolean legacy) throws Exception {
    Map<String, MethodHandler> handlers = new HashMap<>();
    handlers.put("InitializeConnection", call -> {
      inits.add(InitializeConnectionRequest.parseFrom(call.args()));
      call.reply(org.jperfetto.protos.InitializeConnectionResponse.getDefaultInstance());
    });
    handlers.put("RegisterDataSource", call -> {
      registeredDataSources.add(RegisterDataSourceRequest.parseFrom(call.args()).getDataSourceDescriptor().getName());
      call.reply(org.jperfetto.protos.RegisterDataSourceResponse.getDefaultInstance());
    });
    handlers.put("GetAsyncCommand", call -> asyncCommands = call);
    handlers.put("CommitData", call -> {
      CommitDataRequest req = CommitDataRequest.parseFrom(call.args());
      ServiceSide s = service;
      if (s != null) {
        s.commit(req);
      }
      commits.add(req);
      call.reply(org.jperfetto.protos.CommitDataResponse.getDefaultInstance());
    });
    handlers.put("RegisterTraceWriter", call -> {
      writers.add(RegisterTraceWriterRequest.parseFrom(call.args()));
      call.reply(org.jperfetto.protos.RegisterTraceWriterResponse.getDefaultInstance());
    });
    handlers.put("UnregisterTraceWriter", call -> {
      unregisteredWriters.add(org.jperfetto.protos.UnregisterTraceWriterRequest.parseFrom(call.args())
          .getTraceWriterId());
      call.reply(org.jperfetto.protos.UnregisterTraceWriterResponse.getDefaultInstance());
    });
    handlers.put("NotifyDataSourceStarted", call -> {
      started.add(org.jperfetto.protos.NotifyDataSourceStartedRequest.parseFrom(call.args()).getDataSourceId());
      call.reply(org.jperfetto.protos.NotifyDataSourceStartedResponse.getDefaultInstance());
    });
    handlers.put("NotifyDataSourceStopped", call -> {
      stopped.add(NotifyDataSourceStoppedRequest.parseFrom(call.args()).getDataSourceId());
      call.reply(org.jperfetto.protos.NotifyDataSourceStoppedResponse.getDefaultInstance());
    });
    ServiceDefinition full = ServiceDefinition.fromDescriptor(
        ProducerPortOuterClass.getDescriptor().findServiceByName("ProducerPort"), handlers,
        new ServiceListener() {});
    ServiceDefinition served;
    if (legacy) {
      ServiceDefinition.Builder b = ServiceDefinition.builder("ProducerPort");
      for (ServiceDefinition.Method m : full.methods()) {
        if (!m.name().equals("Sync") && !m.name().equals("UpdateDataSource")) {
          b.method(m.name(), m.handler());
        }
      }
      served = b.build();
    } else {
      ServiceDefinition.Builder b = ServiceDefinition.builder("ProducerPort");
      for (ServiceDefinition.Method m : full.methods()) {
        if (m.name().equals("Sync") || m.name().equals("UpdateDataSource")) {
          b.method(m.name(), call -> {
            syncs.add(m.name());
            call.reply(com.google.protobuf.ByteString.EMPTY);
          });
        } else {
          b.method(m.name(), m.handler());
        }
      }
      served = b.build();
    }
    ServiceDefinition.Builder recording = ServiceDefinition.builder("ProducerPort");
    for (ServiceDefinition.Method m : served.methods()) {
      recording.method(m.name(), call -> {
        calls.add(Map.entry(m.name(), call.args()));
        m.handler().handle(call);
      });
    }
    host = IpcHost.start(socketPath, List.of(recording.build()));
  }

  boolean hasAsyncStream() {
    return asyncCommands != null;
  }

  /** Makes a sealed memfd SMB, maps it here too, and sends setup_tracing with its fd. */
  void setUpTracing(int pages, int pageSize, long bufferBytes) throws Exception {
    long size = (long) pages * pageSize;
    int fd = MemFd.create("perfetto_shmem", size);
    MemFd.addSeals(fd, MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL);
    MemorySegment smb = SharedMapping.map(fd, size, Arena.ofAuto());
    service = new ServiceSide(smb, pageSize, bufferBytes);
    send(GetAsyncCommandResponse.newBuilder().setSetupTracing(
        GetAsyncCommandResponse.SetupTracing.newBuilder().setSharedBufferPageSizeKb(pageSize / 1024)).build(), fd);
  }

  /** Sends setup_tracing with an fd of the caller's making (for hostile cases). */
  void setUpTracingWith(int fd, int pageSizeKb) {
    send(GetAsyncCommandResponse.newBuilder().setSetupTracing(
        GetAsyncCommandResponse.SetupTracing.newBuilder().setSharedBufferPageSizeKb(pageSizeKb)).build(), fd);
  }

  void startDataSource(long id, String name, int targetBuffer) {
    DataSourceConfig config = DataSourceConfig.newBuilder().setName(name).setTargetBuffer(targetBuffer).build();
    send(GetAsyncCommandResponse.newBuilder().setSetupDataSource(GetAsyncCommandResponse.SetupDataSource
        .newBuilder().setNewInstanceId(id).setConfig(config)).build(), -1);
    send(GetAsyncCommandResponse.newBuilder().setStartDataSource(GetAsyncCommandResponse.StartDataSource
        .newBuilder().setNewInstanceId(id).setConfig(config)).build(), -1);
  }

  void stopDataSource(long id) {
    send(GetAsyncCommandResponse.newBuilder().setStopDataSource(
        GetAsyncCommandResponse.StopDataSource.newBuilder().setInstanceId(id)).build(), -1);
  }

  void flush(long requestId, long... ids) {
    GetAsyncCommandResponse.Flush.Builder f = GetAsyncCommandResponse.Flush.newBuilder().setRequestId(requestId);
    for (long id : ids) {
      f.addDataSourceIds(id);
    }
    send(GetAsyncCommandResponse.newBuilder().setFlush(f).build(), -1);
  }

  void clearIncrementalState(long... ids) {
    GetAsyncCommandResponse.ClearIncrementalState.Builder c =
        GetAsyncCommandResponse.ClearIncrementalState.newBuilder();
    for (long id : ids) {
      c.addDataSourceIds(id);
    }
    send(GetAsyncCommandResponse.newBuilder().setClearIncrementalState(c).build(), -1);
  }

  private void send(GetAsyncCommandResponse cmd, int fd) {
    asyncCommands.send(cmd.toByteString(), true, fd);
  }

  /** Index of the first CommitData carrying flushRequestId, or -1. */
  int flushAckIndex(long flushRequestId) {
    for (int i = 0; i < commits.size(); i++) {
      if (commits.get(i).getFlushRequestId() == flushRequestId) {
        return i;
      }
    }
    return -1;
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(5);
    }
  }

  @Override
  public void close() {
    host.close();
  }
}
