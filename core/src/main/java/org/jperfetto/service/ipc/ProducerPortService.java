package org.jperfetto.service.ipc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.ipc.MethodCall;
import org.jperfetto.ipc.MethodHandler;
import org.jperfetto.ipc.RawCall;
import org.jperfetto.ipc.ServiceDefinition;
import org.jperfetto.ipc.ServiceListener;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.protos.ActivateTriggersRequest;
import org.jperfetto.protos.ActivateTriggersResponse;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.CommitDataResponse;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.InitializeConnectionResponse;
import org.jperfetto.protos.NotifyDataSourceStartedRequest;
import org.jperfetto.protos.NotifyDataSourceStartedResponse;
import org.jperfetto.protos.NotifyDataSourceStoppedRequest;
import org.jperfetto.protos.NotifyDataSourceStoppedResponse;
import org.jperfetto.protos.RegisterDataSourceRequest;
import org.jperfetto.protos.RegisterDataSourceResponse;
import org.jperfetto.protos.RegisterTraceWriterRequest;
import org.jperfetto.protos.RegisterTraceWriterResponse;
import org.jperfetto.protos.SyncResponse;
import org.jperfetto.protos.UnregisterDataSourceRequest;
import org.jperfetto.protos.UnregisterDataSourceResponse;
import org.jperfetto.protos.UnregisterTraceWriterRequest;
import org.jperfetto.protos.UnregisterTraceWriterResponse;
import org.jperfetto.protos.UpdateDataSourceRequest;
import org.jperfetto.protos.UpdateDataSourceResponse;
import org.jperfetto.service.ClientIdentity;
import org.jperfetto.service.ProducerCallbacks;
import org.jperfetto.service.ProducerEndpoint;
import org.jperfetto.service.SharedMemory;
import org.jperfetto.service.TracingService;

/**
 * ProducerPort on a socket: each connected client that sent InitializeConnection becomes one
 * {@link ProducerEndpoint} of the {@link TracingService}. Requests arrive on the IPC loop thread
 * and are decoded there; the work runs on the service's thread (at once when that is the loop's
 * own thread, as in jtraced), and the answer goes back through the {@link MethodCall}. Every
 * method but InitializeConnection fails until
 * InitializeConnection succeeded. Commands for the producer ({@link ProducerCallbacks}) become
 * replies of its GetAsyncCommand stream, queued until the producer opens that stream.
 *
 * <p>One instance serves one {@link IpcHost} (client ids are per host); several listening
 * sockets use several instances over the same service.
 */
public final class ProducerPortService {
  private static final System.Logger LOG = System.getLogger(ProducerPortService.class.getName());
  public static final String SERVICE_NAME = "ProducerPort";
  /**
   * The methods in producer_port.proto's order (their ids), spelled out so that jtraced does not
   * build the descriptors of every config proto at start; ServicePortMethodsTest compares them.
   */
  static final List<String> METHODS = List.of("InitializeConnection", "RegisterDataSource",
      "UnregisterDataSource", "CommitData", "GetAsyncCommand", "RegisterTraceWriter",
      "UnregisterTraceWriter", "NotifyDataSourceStarted", "NotifyDataSourceStopped",
      "ActivateTriggers", "Sync", "UpdateDataSource");
  /**
   * Commands held for a producer that has not opened its GetAsyncCommand stream (upstream drops
   * them; we keep them so a late stream still sees its setup). A producer that lets this many pile
   * up is not listening and is disconnected.
   */
  static final int MAX_PENDING_COMMANDS = 1024;
  /**
   * Encoded bytes of the commands held that way (a data source's config may be as large as a
   * frame): past it the producer is disconnected too. The same bound as the queue the commands
   * then go to ({@link IpcHost#MAX_SEND_BUFFER_BYTES}).
   */
  static final long MAX_PENDING_COMMAND_BYTES = IpcHost.MAX_SEND_BUFFER_BYTES;

  private final TracingService service;
  /** Touched on the loop thread (add/remove) and read there; values' state is service-thread only. */
  private final Map<Long, RemoteProducer> producers = new ConcurrentHashMap<>();
  private final ServiceDefinition definition;
  private volatile IpcHost host;

  public ProducerPortService(TracingService service) {
    this.service = service;
    Map<String, MethodHandler> h = new HashMap<>();
    h.put("InitializeConnection", this::initializeConnection);
    h.put("RegisterDataSource", call -> onProducer(call, RegisterDataSourceRequest.parser(), (p, req) -> {
      String error = p.endpoint.registerDataSource(req.getDataSourceDescriptor());
      return RegisterDataSourceResponse.newBuilder().setError(error).build();
    }));
    h.put("UnregisterDataSource", call -> onProducer(call, UnregisterDataSourceRequest.parser(), (p, req) -> {
      p.endpoint.unregisterDataSource(req.getDataSourceName());
      return UnregisterDataSourceResponse.getDefaultInstance();
    }));
    h.put("UpdateDataSource", call -> onProducer(call, UpdateDataSourceRequest.parser(), (p, req) -> {
      p.endpoint.updateDataSource(req.getDataSourceDescriptor());
      return UpdateDataSourceResponse.getDefaultInstance();
    }));
    h.put("CommitData", call -> onProducer(call, CommitDataRequest.parser(), (p, req) -> {
      p.endpoint.commitData(req, () -> call.reply(CommitDataResponse.getDefaultInstance()));
      return null;
    }));
    h.put("GetAsyncCommand", call -> onProducer(call, null, (p, req) -> {
      p.bindCommandStream(call);
      return null;
    }));
    h.put("RegisterTraceWriter", call -> onProducer(call, RegisterTraceWriterRequest.parser(), (p, req) -> {
      p.endpoint.registerTraceWriter(req.getTraceWriterId(), req.getTargetBuffer());
      return RegisterTraceWriterResponse.getDefaultInstance();
    }));
    h.put("UnregisterTraceWriter", call -> onProducer(call, UnregisterTraceWriterRequest.parser(), (p, req) -> {
      p.endpoint.unregisterTraceWriter(req.getTraceWriterId());
      return UnregisterTraceWriterResponse.getDefaultInstance();
    }));
    h.put("NotifyDataSourceStarted", call -> onProducer(call, NotifyDataSourceStartedRequest.parser(), (p, req) -> {
      p.endpoint.notifyDataSourceStarted(req.getDataSourceId());
      return NotifyDataSourceStartedResponse.getDefaultInstance();
    }));
    h.put("NotifyDataSourceStopped", call -> onProducer(call, NotifyDataSourceStoppedRequest.parser(), (p, req) -> {
      p.endpoint.notifyDataSourceStopped(req.getDataSourceId());
      return NotifyDataSourceStoppedResponse.getDefaultInstance();
    }));
    h.put("ActivateTriggers", call -> onProducer(call, ActivateTriggersRequest.parser(), (p, req) -> {
      p.endpoint.activateTriggers(req.getTriggerNamesList());
      return ActivateTriggersResponse.getDefaultInstance();
    }));
    h.put("Sync", call -> onProducer(call, null, (p, req) -> {
      p.endpoint.sync(() -> call.reply(SyncResponse.getDefaultInstance()));
      return null;
    }));
    ServiceDefinition decoded = ServiceDefinition.fromMethodNames(SERVICE_NAME, METHODS, h, new ServiceListener() {
          @Override
          public void onClientDisconnected(ClientInfo client) {
            RemoteProducer p = producers.remove(client.clientId());
            if (p != null) {
              service.taskRunner().post(p::onTransportGone);
            }
          }
        });
    definition = decoded.withRawHandler("CommitData", this::commitDataInPlace);
  }

  /**
   * CommitData served from the request bytes, with no protobuf object and no allocation, when the
   * service runs on the IPC thread ({@link CommitDataApplier}); declined (and decoded by the
   * regular handler, which judges it) when the decoder does not take the request as it is.
   */
  private boolean commitDataInPlace(RawCall call) {
    if (!service.taskRunner().isOnRunnerThread()) {
      return false;
    }
    RemoteProducer p = producers.get(call.client().clientId());
    if (p == null || p.endpoint == null || p.transportGone || p.kicked
        || !commitDecoder.apply(call.args(), call.argsOffset(), call.argsLength(), p.endpoint)) {
      return false;
    }
    call.replyEmpty();
    return true;
  }

  /** Service-thread only (it is the IPC thread whenever it is used). */
  private final CommitDataApplier commitDecoder = new CommitDataApplier();

  /** What to give {@link IpcHost#start}. */
  public ServiceDefinition definition() {
    return definition;
  }

  /** The host serving {@link #definition()}: needed to drop producers the service kicks out. */
  public void attach(IpcHost ipcHost) {
    this.host = ipcHost;
  }

  /** Producers that completed InitializeConnection and are still connected. */
  public int connectedProducers() {
    return (int) producers.values().stream().filter(p -> p.initialized).count();
  }

  // ---------------------------------------------------------------------------------------------

  private void initializeConnection(MethodCall call) throws InvalidProtocolBufferException {
    InitializeConnectionRequest req = InitializeConnectionRequest.parseFrom(call.args());
    long clientId = call.client().clientId();
    if (producers.containsKey(clientId)) {
      LOG.log(Level.WARNING, "producer client " + clientId + " sent InitializeConnection twice");
      call.fail();
      return;
    }
    Optional<SharedMemory> provided = Optional.empty();
    boolean emulated = call.client().tcp(); // no fd can travel: chunks come inside CommitData
    if (req.getProducerProvidedShmem() && !emulated) {
      int fd = call.takeReceivedFd();
      if (fd >= 0) {
        provided = MemfdSharedMemory.adoptFromProducer(fd);
      }
    }
    RemoteProducer p = new RemoteProducer(call.client());
    producers.put(clientId, p);
    Optional<SharedMemory> smb = provided;
    ClientIdentity identity = new ClientIdentity(call.client().uid(), call.client().pid(),
        call.client().machineId(), call.client().machineName());
    service.taskRunner().runOrPost(() -> {
      try {
        p.endpoint = service.connectProducer(p, identity, req.getProducerName(),
            Integer.toUnsignedLong(req.getSharedMemorySizeHintBytes()),
            Integer.toUnsignedLong(req.getSharedMemoryPageSizeHintBytes()), smb, req.getSdkVersion());
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "refusing producer \"" + req.getProducerName() + "\": " + e.getMessage());
        smb.ifPresent(SharedMemory::close);
        producers.remove(clientId, p);
        call.fail();
        return;
      }
      p.initialized = true;
      if (p.transportGone) { // disconnected while the connect was queued
        p.endpoint.disconnect();
        return;
      }
      call.reply(InitializeConnectionResponse.newBuilder()
          .setUsingShmemProvidedByProducer(!emulated && p.endpoint.usingProducerProvidedSmb())
          .setDirectSmbPatchingSupported(p.endpoint.directSmbPatchingSupported())
          .setUseShmemEmulation(emulated)
          .build());
    });
  }

  /**
   * Decodes the request (parser null: no arguments worth decoding) on the loop thread, then runs
   * action on the service thread with the caller's producer; a non-null result is the reply.
   */
  private <T> void onProducer(MethodCall call, Parser<T> parser,
      BiFunction<RemoteProducer, T, MessageLite> action) throws InvalidProtocolBufferException {
    RemoteProducer p = producers.get(call.client().clientId());
    if (p == null) {
      LOG.log(Level.DEBUG, () -> call.methodName() + " before InitializeConnection: " + call);
      call.fail();
      return;
    }
    T req = parser == null ? null : parser.parseFrom(call.args());
    service.taskRunner().runOrPost(() -> {
      if (p.endpoint == null || p.transportGone || p.kicked) {
        call.fail();
        return;
      }
      MessageLite reply = action.apply(p, req);
      if (reply != null) {
        call.reply(reply);
      }
    });
  }

  /** One producer connection; everything but construction runs on the service thread. */
  private final class RemoteProducer implements ProducerCallbacks {
    final ClientInfo client;
    volatile boolean initialized;
    ProducerEndpoint endpoint;
    boolean transportGone;
    boolean kicked;
    private MethodCall commandStream;
    /** Commands sent before GetAsyncCommand, with the fd each carries (or -1). */
    private final ArrayDeque<Command> pending = new ArrayDeque<>();
    private long pendingBytes;

    private record Command(GetAsyncCommandResponse message, int fd) {}

    RemoteProducer(ClientInfo client) {
      this.client = client;
    }

    void bindCommandStream(MethodCall call) {
      if (commandStream != null && !commandStream.isDone()) {
        commandStream.fail(); // a second stream replaces the first, as upstream's does
      }
      commandStream = call;
      pendingBytes = 0;
      while (!pending.isEmpty()) {
        Command c = pending.poll();
        send(c.message(), c.fd());
      }
    }

    void onTransportGone() {
      transportGone = true;
      while (!pending.isEmpty()) {
        Fds.closeQuietly(pending.poll().fd());
      }
      if (endpoint != null && !kicked) {
        endpoint.disconnect();
      }
    }

    private void command(GetAsyncCommandResponse message, int fd) {
      if (transportGone || kicked) {
        Fds.closeQuietly(fd);
      } else if (commandStream == null) {
        pending.add(new Command(message, fd));
        pendingBytes += message.getSerializedSize();
        if (pending.size() > MAX_PENDING_COMMANDS || pendingBytes > MAX_PENDING_COMMAND_BYTES) {
          // the service has not dropped it: the transport's goodbye will disconnect the endpoint
          closeTransport(pending.size() + " commands (" + pendingBytes
              + " bytes) pending and no GetAsyncCommand stream");
        }
      } else {
        send(message, fd);
      }
    }

    private void send(GetAsyncCommandResponse message, int fd) {
      try {
        commandStream.send(message.toByteString(), true, fd);
      } catch (RuntimeException e) { // the stream was ended (client dropped mid-way)
        LOG.log(Level.DEBUG, () -> "command to producer " + client.clientId() + " lost: " + e.getMessage());
      }
    }

    @Override
    public void setupTracing(SharedMemory smb, int pageSizeKb) {
      GetAsyncCommandResponse.SetupTracing.Builder setup = GetAsyncCommandResponse.SetupTracing.newBuilder();
      int fd = -1;
      // endpoint is still null inside connectProducer, which sets up only an adopted SMB.
      boolean providedByProducer = endpoint == null || endpoint.usingProducerProvidedSmb();
      if (!providedByProducer) {
        setup.setSharedBufferPageSizeKb(pageSizeKb);
        if (smb.handle() instanceof Integer smbFd && !client.tcp()) { // TCP: the producer emulates it
          try {
            fd = Fds.dup(smbFd);
          } catch (ErrnoException e) {
            LOG.log(Level.ERROR, "cannot dup the SMB fd for producer " + client.clientId() + ": "
                + e.getMessage());
          }
        }
      }
      command(GetAsyncCommandResponse.newBuilder().setSetupTracing(setup).build(), fd);
    }

    @Override
    public void setupDataSource(long instanceId, DataSourceConfig config) {
      command(GetAsyncCommandResponse.newBuilder().setSetupDataSource(
          GetAsyncCommandResponse.SetupDataSource.newBuilder().setNewInstanceId(instanceId)
              .setConfig(config)).build(), -1);
    }

    @Override
    public void startDataSource(long instanceId, DataSourceConfig config) {
      command(GetAsyncCommandResponse.newBuilder().setStartDataSource(
          GetAsyncCommandResponse.StartDataSource.newBuilder().setNewInstanceId(instanceId)
              .setConfig(config)).build(), -1);
    }

    @Override
    public void stopDataSource(long instanceId) {
      command(GetAsyncCommandResponse.newBuilder().setStopDataSource(
          GetAsyncCommandResponse.StopDataSource.newBuilder().setInstanceId(instanceId)).build(), -1);
    }

    @Override
    public void flush(long requestId, long[] dataSourceInstanceIds, long flags) {
      GetAsyncCommandResponse.Flush.Builder f = GetAsyncCommandResponse.Flush.newBuilder()
          .setRequestId(requestId).setFlags(flags);
      for (long id : dataSourceInstanceIds) {
        f.addDataSourceIds(id);
      }
      command(GetAsyncCommandResponse.newBuilder().setFlush(f).build(), -1);
    }

    @Override
    public void clearIncrementalState(long[] dataSourceInstanceIds) {
      GetAsyncCommandResponse.ClearIncrementalState.Builder c =
          GetAsyncCommandResponse.ClearIncrementalState.newBuilder();
      for (long id : dataSourceInstanceIds) {
        c.addDataSourceIds(id);
      }
      command(GetAsyncCommandResponse.newBuilder().setClearIncrementalState(c).build(), -1);
    }

    @Override
    public void onDisconnectedByService(String reason) {
      kicked = true;
      closeTransport("dropped by the tracing service: " + reason);
    }

    private void closeTransport(String reason) {
      while (!pending.isEmpty()) {
        Fds.closeQuietly(pending.poll().fd());
      }
      pendingBytes = 0;
      IpcHost h = host;
      if (h != null) {
        h.disconnect(client.clientId(), reason);
      }
    }
  }
}
