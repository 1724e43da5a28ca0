package org.jperfetto.protos;

import static org.jperfetto.protos.ProtoAssertions.assertNoUnknownFields;
import static org.jperfetto.protos.ProtoAssertions.assertNoUnknownFieldsExceptRetired;
import static org.jperfetto.protos.ProtoAssertions.assertReserializes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jperfetto.protos.InteropCaptures.Connection;
import org.jperfetto.protos.InteropCaptures.Frame;
import org.jperfetto.protos.InteropCaptures.IoRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays the IPC streams captured between upstream Perfetto binaries (v14 and v58 producers and
 * consumers, v58 traced) through our generated classes. Every IPCFrame, every InvokeMethod
 * argument and every reply is parsed as the type our ProducerPort/ConsumerPort service
 * declarations give that method, must leave no unknown field anywhere (a wrong field number turns
 * up as one) and must re-serialize to the captured bytes.
 *
 * <p>Byte equality holds only where upstream happened to write what protobuf-java writes. It does
 * not for: every frame and message written by v14 code (its protozero writer pads each nested
 * length to a 4-byte varint: BindServiceReply's method list, CommitDataRequest, EnableTracingRequest,
 * DataSourceDescriptor); messages v58 traced and the v58 client library encode in declaration order
 * rather than field-number order (the DataSourceConfig inside GetAsyncCommandResponse,
 * RegisterDataSourceRequest's descriptor, ReadBuffersResponse); and all TracePackets, which come
 * from the producers' shared memory. Those are compared in the canonical form of
 * {@link ProtoAssertions#canonical} (minimal varints, fields sorted by number), which still
 * compares every value. Values the README states are asserted too, since a swapped pair
 * of field numbers with equal types would pass the structural checks.
 */
class IpcMessagesInteropTest {
  private static final Map<String, ServiceDescriptor> SERVICES = Map.of(
      "ProducerPort", ProducerPortOuterClass.getDescriptor().findServiceByName("ProducerPort"),
      "ConsumerPort", ConsumerPortOuterClass.getDescriptor().findServiceByName("ConsumerPort"));

  /**
   * Fields older peers still send that upstream has since removed and reserved: v14 producers send
   * InitializeConnectionRequest field 5 (its build flags).
   */
  private static final Set<String> RETIRED = Set.of("perfetto.protos.InitializeConnectionRequest#5");

  static List<Connection> connections() {
    List<Connection> all = InteropCaptures.connections();
    assertTrue(all.size() >= 10, "expected every captured socket, found " + all);
    return all;
  }

  /** Connections on the producer socket: the producer apps' and traced's side of them. */
  static List<Connection> producerConnections() {
    return bindingConnections("ProducerPort", 6);
  }

  /** Connections on the consumer socket: the CLI's, the SDK consumer's and traced's side. */
  static List<Connection> consumerConnections() {
    return bindingConnections("ConsumerPort", 6);
  }

  private static List<Connection> bindingConnections(String service, int expected) {
    List<Connection> matching = connections().stream().filter(c -> decode(c).binds(service)).toList();
    assertEquals(expected, matching.size(), "connections binding " + service + ": " + matching);
    return matching;
  }

  /** One InvokeMethod and the replies carrying its request id. */
  record Call(long requestId, MethodDescriptor method, Frame invoke, Message request,
      List<Frame> replyFrames, List<Message> replies) {
    String name() {
      return method.getName();
    }
  }

  /** A connection decoded: which stream is the client's, what was bound, and every call. */
  record Conversation(Connection connection, String clientDir, List<Frame> client, List<Frame> host,
      Map<String, IPCFrame.BindServiceReply> bound, List<Call> calls) {
    String hostDir() {
      return clientDir.equals("send") ? "recv" : "send";
    }

    List<Call> calls(String method) {
      return calls.stream().filter(c -> c.name().equals(method)).toList();
    }

    boolean binds(String service) {
      return bound.containsKey(service);
    }
  }

  static Conversation decode(Connection c) {
    List<Frame> sent = InteropCaptures.frames(InteropCaptures.read(c.stream("send")), c + " send");
    List<Frame> received = InteropCaptures.frames(InteropCaptures.read(c.stream("recv")), c + " recv");
    boolean clientSends = sent.stream().anyMatch(f -> f.frame().hasMsgBindService());
    List<Frame> client = clientSends ? sent : received;
    List<Frame> host = clientSends ? received : sent;
    assertTrue(client.stream().anyMatch(f -> f.frame().hasMsgBindService()), c + ": no BindService frame");

    Map<Long, String> bindRequests = new HashMap<>();
    for (Frame f : client) {
      if (f.frame().hasMsgBindService()) {
        bindRequests.put(f.frame().getRequestId(), f.frame().getMsgBindService().getServiceName());
      }
    }
    Map<String, IPCFrame.BindServiceReply> bound = new LinkedHashMap<>();
    Map<Integer, ServiceDescriptor> servicesById = new HashMap<>();
    for (Frame f : host) {
      if (f.frame().hasMsgBindServiceReply()) {
        String name = bindRequests.get(f.frame().getRequestId());
        assertNotNull(name, c + ": BindServiceReply for unknown request " + f.frame().getRequestId());
        ServiceDescriptor service = SERVICES.get(name);
        assertNotNull(service, c + ": bound a service we do not declare: " + name);
        bound.put(name, f.frame().getMsgBindServiceReply());
        servicesById.put(f.frame().getMsgBindServiceReply().getServiceId(), service);
      }
    }

    Map<Long, Call> byRequest = new LinkedHashMap<>();
    for (Frame f : client) {
      if (!f.frame().hasMsgInvokeMethod()) {
        continue;
      }
      IPCFrame.InvokeMethod invoke = f.frame().getMsgInvokeMethod();
      ServiceDescriptor service = servicesById.get(invoke.getServiceId());
      assertNotNull(service, c + ": invoke on unbound service " + invoke.getServiceId());
      MethodDescriptor method = methodById(bound.get(service.getName()), service, invoke.getMethodId(), c);
      Message request = parse(method.getInputType(), invoke.getArgsProto(), c + " " + method.getName() + " args");
      Call call = new Call(f.frame().getRequestId(), method, f, request, new ArrayList<>(), new ArrayList<>());
      assertTrue(byRequest.put(call.requestId(), call) == null, c + ": request id reused " + call.requestId());
    }
    for (Frame f : host) {
      if (!f.frame().hasMsgInvokeMethodReply()) {
        continue;
      }
      Call call = byRequest.get(f.frame().getRequestId());
      assertNotNull(call, c + ": reply to unknown request " + f.frame().getRequestId());
      call.replyFrames().add(f);
      call.replies().add(parse(call.method().getOutputType(),
          f.frame().getMsgInvokeMethodReply().getReplyProto(), c + " " + call.name() + " reply"));
    }
    return new Conversation(c, clientSends ? "send" : "recv", client, host, bound, List.copyOf(byRequest.values()));
  }

  private static MethodDescriptor methodById(IPCFrame.BindServiceReply reply, ServiceDescriptor service, int id,
      Connection c) {
    for (IPCFrame.BindServiceReply.MethodInfo m : reply.getMethodsList()) {
      if (m.getId() == id) {
        MethodDescriptor method = service.findMethodByName(m.getName());
        assertNotNull(method, c + ": " + service.getName() + " has no method " + m.getName());
        return method;
      }
    }
    return fail(c + ": method id " + id + " was not bound on " + service.getName());
  }

  /** Parses with the generated class for {@code type} (found from the descriptor, not a table). */
  static Message parse(Descriptor type, ByteString bytes, String what) {
    Message prototype = prototype(type);
    try {
      return prototype.getParserForType().parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      return fail(what + ": not a " + type.getFullName() + ": " + e.getMessage());
    }
  }

  static Message prototype(Descriptor type) {
    String simple = type.getFullName().substring("perfetto.protos.".length()).replace('.', '$');
    try {
      Class<?> generated = Class.forName("org.jperfetto.protos." + simple);
      Message prototype = (Message) generated.getMethod("getDefaultInstance").invoke(null);
      assertSame(type, prototype.getDescriptorForType());
      return prototype;
    } catch (ReflectiveOperationException e) {
      return fail("no generated class for " + type.getFullName() + ": " + e);
    }
  }

  @Test
  void servicesDeclareUpstreamsMethodsInOrder() {
    // The ids upstream's IPC method tables give (index + 1); the captures below confirm them against real traced.
    List<String> producer = List.of("InitializeConnection", "RegisterDataSource", "UnregisterDataSource",
        "CommitData", "GetAsyncCommand", "RegisterTraceWriter", "UnregisterTraceWriter",
        "NotifyDataSourceStarted", "NotifyDataSourceStopped", "ActivateTriggers", "Sync", "UpdateDataSource");
    List<String> consumer = List.of("EnableTracing", "DisableTracing", "ReadBuffers", "FreeBuffers", "Flush",
        "StartTracing", "ChangeTraceConfig", "Detach", "Attach", "GetTraceStats", "ObserveEvents",
        "QueryServiceState", "QueryCapabilities", "SaveTraceForBugreport", "CloneSession");
    assertEquals(producer, SERVICES.get("ProducerPort").getMethods().stream().map(MethodDescriptor::getName).toList());
    assertEquals(consumer, SERVICES.get("ConsumerPort").getMethods().stream().map(MethodDescriptor::getName).toList());
    assertTrue(SERVICES.get("ProducerPort").findMethodByName("GetAsyncCommand").isServerStreaming());
    assertTrue(SERVICES.get("ConsumerPort").findMethodByName("ReadBuffers").isServerStreaming());
  }

  @Test
  void retiredFieldsAreReservedInOurDeclarations() {
    for (String key : RETIRED) {
      String type = key.substring(0, key.indexOf('#'));
      int number = Integer.parseInt(key.substring(key.indexOf('#') + 1));
      Descriptor d = prototype(ProducerPortOuterClass.getDescriptor().findMessageTypeByName(
          type.substring("perfetto.protos.".length()))).getDescriptorForType();
      assertTrue(ProtoAssertions.isReserved(d, number), key + " must be reserved");
      assertEquals(null, d.findFieldByNumber(number), key);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("connections")
  void streamsMatchTheSyscallLog(Connection c) {
    for (String dir : List.of("send", "recv")) {
      ByteString logged = ByteString.EMPTY;
      for (IoRecord r : InteropCaptures.ioRecords(c, dir)) {
        logged = logged.concat(ByteString.copyFrom(r.bytes()));
      }
      assertEquals(ByteString.copyFrom(InteropCaptures.read(c.stream(dir))), logged, c + " " + dir);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("connections")
  void boundMethodIdsFollowOurDeclarationOrder(Connection c) {
    Conversation conv = decode(c);
    assertFalse(conv.bound().isEmpty(), c + ": nothing bound");
    for (Map.Entry<String, IPCFrame.BindServiceReply> e : conv.bound().entrySet()) {
      IPCFrame.BindServiceReply reply = e.getValue();
      assertTrue(reply.getSuccess(), c + ": bind " + e.getKey() + " failed");
      List<MethodDescriptor> ours = SERVICES.get(e.getKey()).getMethods();
      assertEquals(ours.size(), reply.getMethodsCount(), c + ": " + e.getKey() + " method count");
      for (int i = 0; i < ours.size(); i++) {
        assertEquals(i + 1, reply.getMethods(i).getId(), c + ": id of " + reply.getMethods(i).getName());
        assertEquals(ours.get(i).getName(), reply.getMethods(i).getName(), c + ": method with id " + (i + 1));
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("connections")
  void everyFrameArgumentAndReplyIsFullyModelledAndReserializes(Connection c) {
    Conversation conv = decode(c);
    int checked = 0;
    for (Frame f : Stream.concat(conv.client().stream(), conv.host().stream()).toList()) {
      assertNoUnknownFields(f.frame(), c + " frame@" + f.offset());
      assertReserializes(f.bytes(), f.frame(), c + " frame@" + f.offset());
      checked++;
    }
    for (Call call : conv.calls()) {
      String what = c + " " + call.name() + " #" + call.requestId();
      assertNoUnknownFieldsExceptRetired(call.request(), RETIRED, what + " args");
      assertReserializes(call.invoke().frame().getMsgInvokeMethod().getArgsProto(), call.request(), what + " args");
      for (int i = 0; i < call.replies().size(); i++) {
        assertNoUnknownFields(call.replies().get(i), what + " reply " + i);
        assertReserializes(call.replyFrames().get(i).frame().getMsgInvokeMethodReply().getReplyProto(),
            call.replies().get(i), what + " reply " + i);
        checked++;
      }
      checked++;
    }
    assertTrue(checked >= 10, c + ": only " + checked + " messages");
  }

  private static final Pattern VERSION = Pattern.compile("v(\\d+)");

  /** The producer app of a folder: sdk_app_v14 or sdk_app_v58, from the folder name. */
  private static String expectedProducerName(Connection c) {
    Matcher m = VERSION.matcher(c.folder().getFileName().toString());
    assertTrue(m.find(), c.toString());
    return "sdk_app_v" + m.group(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("producerConnections")
  void producerSessionCarriesTheReadmeValues(Connection c) throws Exception {
    Conversation conv = decode(c);
    List<Call> init = conv.calls("InitializeConnection");
    assertEquals(1, init.size(), c + ": InitializeConnection calls");
    InitializeConnectionRequest request = (InitializeConnectionRequest) init.getFirst().request();
    assertEquals(expectedProducerName(c), request.getProducerName());

    List<String> registered = conv.calls("RegisterDataSource").stream()
        .map(call -> ((RegisterDataSourceRequest) call.request()).getDataSourceDescriptor().getName())
        .toList();
    assertEquals(List.of("track_event"), registered, c + ": registered data sources");

    // The service sends the SMB fd with the GetAsyncCommand reply that carries setup_tracing, and
    // only with that one.
    List<Call> async = conv.calls("GetAsyncCommand");
    assertEquals(1, async.size(), c + ": GetAsyncCommand calls");
    List<Frame> setupFrames = new ArrayList<>();
    List<String> commands = new ArrayList<>();
    for (int i = 0; i < async.getFirst().replies().size(); i++) {
      GetAsyncCommandResponse cmd = (GetAsyncCommandResponse) async.getFirst().replies().get(i);
      commands.add(cmd.getCmdCase().name());
      if (cmd.hasSetupTracing()) {
        setupFrames.add(async.getFirst().replyFrames().get(i));
      }
      if (cmd.hasSetupDataSource()) {
        assertEquals("track_event", cmd.getSetupDataSource().getConfig().getName(), c + " setup_data_source");
      }
      if (cmd.hasStartDataSource()) {
        assertEquals("track_event", cmd.getStartDataSource().getConfig().getName(), c + " start_data_source");
      }
    }
    assertEquals(1, setupFrames.size(), c + ": setup_tracing commands in " + commands);
    assertTrue(commands.contains("START_DATA_SOURCE"), c + ": " + commands);
    List<IoRecord> withFds = InteropCaptures.ioRecords(c, conv.hostDir()).stream()
        .filter(r -> !r.scmRights().isEmpty()).toList();
    assertEquals(1, withFds.size(), c + ": messages passing fds");
    assertEquals(1, withFds.getFirst().scmRights().size(), c + ": fds in one message");
    assertTrue(withFds.getFirst().covers(setupFrames.getFirst().offset()),
        c + ": the fd did not arrive with the setup_tracing reply");

    assertFalse(conv.calls("CommitData").isEmpty(), c + ": no CommitData");
    for (Call commit : conv.calls("CommitData")) {
      CommitDataRequest req = (CommitDataRequest) commit.request();
      for (CommitDataRequest.ChunksToMove move : req.getChunksToMoveList()) {
        assertTrue(move.getPage() < 64, c + ": page out of the 256 KiB SMB: " + move);
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("consumerConnections")
  void consumerSessionCarriesTheReadmeConfig(Connection c) throws Exception {
    Conversation conv = decode(c);
    List<Call> enable = conv.calls("EnableTracing");
    assertEquals(1, enable.size(), c + ": EnableTracing calls");
    TraceConfig config = ((EnableTracingRequest) enable.getFirst().request()).getTraceConfig();
    assertEquals(1, config.getBuffersCount(), c + " buffers");
    assertEquals(4096, config.getBuffers(0).getSizeKb(), c + " size_kb");
    assertEquals("track_event", config.getDataSources(0).getConfig().getName(), c + " data source");
    if (!c.process().equals("sdk_consumer")) {
      // The perfetto CLI sent session.pbtxt: the buffer, data source and duration it names.
      TraceConfig.Builder session = TraceConfig.newBuilder();
      TextFormat.merge(Files.readString(InteropCaptures.interopDir().resolve("session.pbtxt")), session);
      assertEquals(TraceConfig.BufferConfig.FillPolicy.DISCARD, config.getBuffers(0).getFillPolicy());
      assertEquals(3000, config.getDurationMs());
      assertEquals(session.getBuffersList(), config.getBuffersList());
      assertEquals(session.getDurationMs(), config.getDurationMs());
    }
    assertFalse(conv.calls("ReadBuffers").isEmpty(), c + ": no ReadBuffers");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("consumerConnections")
  void readBuffersSlicesReassembleIntoFullyModelledPackets(Connection c) {
    Conversation conv = decode(c);
    int packets = 0;
    int slices = 0;
    ByteString pending = ByteString.EMPTY;
    for (Call read : conv.calls("ReadBuffers")) {
      for (Message reply : read.replies()) {
        for (ReadBuffersResponse.Slice slice : ((ReadBuffersResponse) reply).getSlicesList()) {
          pending = pending.concat(slice.getData());
          slices++;
          if (slice.getLastSliceForPacket()) {
            TracePacket packet = (TracePacket) parse(TracePacket.getDescriptor(), pending, c + " packet " + packets);
            assertNoUnknownFields(packet, c + " packet " + packets);
            assertReserializes(pending, packet, c + " packet " + packets);
            pending = ByteString.EMPTY;
            packets++;
          }
        }
      }
    }
    assertTrue(pending.isEmpty(), c + ": a packet was left unfinished");
    assertTrue(packets > 100, c + ": only " + packets + " packets in " + slices + " slices");
  }
}
