package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jperfetto.service.ipc.SessionIT.config;
import static org.jperfetto.service.ipc.SessionIT.packet;
import static org.jperfetto.service.ipc.SessionIT.waitFor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import org.jperfetto.ipc.IpcHost;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsRequest;
import org.jperfetto.protos.ObserveEventsResponse;
import org.jperfetto.protos.QueryServiceStateRequest;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.TracingServiceState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.DetachRequest;
import org.jperfetto.protos.DisableTracingRequest;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.EnableTracingResponse;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.ReadBuffersRequest;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;

/**
 * ReadBuffers is paced by the consumer's socket: a slow reader gets the whole trace, a reader
 * that stops costs the service a bounded queue (the rest stays in the trace buffer) until the
 * send timeout drops it and frees its session, and one that leaves mid-read costs nothing.
 */
class ConsumerFlowControlIT extends SocketFixture {
  static final TraceConfig.BufferConfig.FillPolicy DISCARD = TraceConfig.BufferConfig.FillPolicy.DISCARD;

  /** Writes n packets of about payload bytes through a new writer, committing as it goes. */
  static void fill(SocketProducer p, int writerId, int n, int payload) throws Exception {
    SmbWriter w = p.startedWriter(writerId);
    for (int i = 0; i < n; i++) {
      assertTrue(w.write(packet(7, i, payload), false));
      if (i % 64 == 63) {
        p.commit();
      }
    }
    p.commit();
  }

  /** Enables a session from the raw consumer; returns the EnableTracing request id. */
  static long enable(RawConsumer c, TraceConfig cfg) throws Exception {
    return c.invoke("EnableTracing", EnableTracingRequest.newBuilder().setTraceConfig(cfg).build());
  }

  /** Stops the raw consumer's session and waits until both DisableTracing and EnableTracing answered. */
  static void disable(RawConsumer c, long enableId) throws Exception {
    long disableId = c.invoke("DisableTracing", DisableTracingRequest.getDefaultInstance());
    boolean disabled = false;
    boolean ended = false;
    while (!disabled || !ended) {
      IPCFrame f = c.next();
      assertNotNull(f, "connection closed while disabling");
      disabled |= f.getRequestId() == disableId;
      if (f.getRequestId() == enableId) {
        assertTrue(EnableTracingResponse.parseFrom(f.getMsgInvokeMethodReply().getReplyProto()).getDisabled());
        ended = true;
      }
    }
  }

  /** The producer's packets as the consumer got them, trusted fields and all. */
  static List<byte[]> testPackets(List<byte[]> packets) throws Exception {
    List<byte[]> out = new ArrayList<>();
    for (byte[] p : packets) {
      if (TracePacket.parseFrom(p).hasForTesting()) {
        out.add(p);
      }
    }
    return out;
  }

  static long heapUsedAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(20);
    }
    Runtime rt = Runtime.getRuntime();
    return rt.totalMemory() - rt.freeMemory();
  }

  @Test
  void aSlowReaderGetsEveryPacketByteEqualToAFastRead() throws Exception {
    SocketProducer p = producer("bulk");
    int n = 4_000; // ~4 MiB: a read pauses and resumes many times
    List<List<byte[]>> reads = new ArrayList<>();
    for (long pauseMs : new long[] {0, 8}) {
      try (RawConsumer c = RawConsumer.connect(consumerSocket)) {
        long enableId = enable(c, config(8 * 1024, DISCARD));
        fill(p, 1, n, 1000);
        disable(c, enableId);
        reads.add(testPackets(c.readPackets(c.invoke("ReadBuffers", ReadBuffersRequest.getDefaultInstance()),
            pauseMs)));
      }
      p.await(org.jperfetto.protos.GetAsyncCommandResponse.CmdCase.STOP_DATA_SOURCE);
    }
    assertEquals(n, reads.get(0).size());
    assertEquals(n, reads.get(1).size());
    for (int i = 0; i < n; i++) {
      assertEquals(TracePacket.parseFrom(reads.get(0).get(i)).getForTesting().getSeqValue(), i);
      assertTrue(java.util.Arrays.equals(reads.get(0).get(i), reads.get(1).get(i)), "packet " + i);
    }
    assertEquals(0, host.consumerHostStats().sendOverflows());
    assertEquals(0, host.consumerHostStats().sendTimeouts());
  }

  @Test
  void aReaderThatStopsHoldsABoundedQueueIsDroppedAtTheSendTimeoutAndOnlyItsAttachedSessionIsFreed()
      throws Exception {
    host.consumerSendTimeoutMs(1500);
    SocketProducer p = producer("bulk");
    TracingConsumer other = consumer();
    try (RawConsumer stuck = RawConsumer.connect(consumerSocket)) {
      // A session it detached: kept when it is dropped, as for any disconnect.
      enable(stuck, config(256, DISCARD));
      p.startedWriter(1);
      long detachId = stuck.invoke("Detach", DetachRequest.newBuilder().setKey("kept").build());
      assertTrue(stuck.replyTo(detachId).getSuccess());

      long enableId = enable(stuck, config(32 * 1024, DISCARD));
      fill(p, 2, 24_000, 1000); // ~24 MiB
      disable(stuck, enableId);
      long before = heapUsedAfterGc();
      stuck.invoke("ReadBuffers", ReadBuffersRequest.getDefaultInstance()); // and never reads
      Thread.sleep(500);
      long stuckHeap = heapUsedAfterGc();
      assertTrue(stuckHeap - before < 8L << 20, "the service's heap grew by " + ((stuckHeap - before) >> 20)
          + " MiB for a reader that reads nothing");

      long start = System.nanoTime();
      assertEquals(2, other.queryServiceState(true).get(5, TimeUnit.SECONDS).getTracingSessionsCount());
      long queryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(queryMs < 1000, "another client waited " + queryMs + " ms");

      waitFor(() -> host.consumerHostStats().sendTimeouts() == 1);
      assertEquals(0, host.consumerHostStats().sendOverflows());
      waitFor(() -> sessions(other) == 1); // the stuck one's own session is freed
      TracingSession kept = other.attach("kept").get(5, TimeUnit.SECONDS);
      assertNotNull(kept);
    }
  }

  @Test
  void aReaderThatLeavesMidReadCostsNothingAndOthersGoOn() throws Exception {
    SocketProducer p = producer("bulk");
    TracingConsumer other = consumer();
    try (RawConsumer leaving = RawConsumer.connect(consumerSocket)) {
      long enableId = enable(leaving, config(8 * 1024, DISCARD));
      fill(p, 1, 6_000, 1000);
      disable(leaving, enableId);
      long readId = leaving.invoke("ReadBuffers", ReadBuffersRequest.getDefaultInstance());
      for (int i = 0; i < 3; i++) {
        IPCFrame.InvokeMethodReply r = leaving.replyTo(readId);
        assertTrue(r.getSuccess() && r.getHasMore());
      }
    } // closed mid-read
    waitFor(() -> sessions(other) == 0);
    TracingSession s = other.enableTracing(config(256, DISCARD));
    fill(p, 2, 10, 100);
    List<TracePacket> packets = SessionIT.stopAndRead(other, s);
    assertEquals(10, packets.stream().filter(TracePacket::hasForTesting).count());
    assertEquals(0, host.consumerHostStats().dropped());
  }

  @Test
  void aDetachMidReadEndsTheReadAndTheSessionReadsOnAfterAttach() throws Exception {
    SocketProducer p = producer("bulk");
    int n = 6_000;
    List<Integer> seqs = new ArrayList<>();
    try (RawConsumer c = RawConsumer.connect(consumerSocket)) {
      long readId = pausedRead(c, p, n);
      long detachId = c.invoke("Detach", DetachRequest.newBuilder().setKey("mid").build());
      boolean readEnded = false;
      boolean detached = false;
      while (!readEnded || !detached) {
        IPCFrame f = c.next();
        assertNotNull(f);
        IPCFrame.InvokeMethodReply r = f.getMsgInvokeMethodReply();
        if (f.getRequestId() == readId) {
          if (r.getSuccess()) {
            seqs.addAll(seqsOf(r));
            assertTrue(r.getHasMore(), "the read cannot end: the detach came first");
          } else {
            readEnded = true;
          }
        } else if (f.getRequestId() == detachId) {
          assertTrue(r.getSuccess());
          detached = true;
        }
      }
    }
    assertFalse(seqs.isEmpty());
    TracingConsumer again = consumer();
    again.attach("mid").get(5, TimeUnit.SECONDS);
    List<TracePacket> rest = SessionIT.read(again);
    for (TracePacket t : rest) {
      if (t.hasForTesting()) {
        seqs.add(t.getForTesting().getSeqValue());
      }
    }
    for (int i = 1; i < seqs.size(); i++) {
      assertTrue(seqs.get(i) > seqs.get(i - 1), "in order, none twice: " + seqs.get(i - 1) + ", " + seqs.get(i));
    }
    assertEquals(n - 1, (int) seqs.getLast(), "the attached consumer reads on to the end");
  }

  @Test
  void aCloneTakenDuringAPausedReadLeavesThatReadWhole() throws Exception {
    SocketProducer p = producer("bulk");
    int n = 4_000;
    try (RawConsumer owner = RawConsumer.connect(consumerSocket)) {
      long readId = pausedRead(owner, p, n);
      TracingConsumer cloner = consumer();
      long id = cloner.queryServiceState(true).get(5, TimeUnit.SECONDS).getTracingSessions(0).getId();
      var cloned = cloner.cloneSession(org.jperfetto.protos.CloneSessionRequest.newBuilder().setSessionId(id).build(),
          -1).get(5, TimeUnit.SECONDS);
      assertTrue(cloned.getSuccess(), cloned.getError());
      List<TracePacket> copy = SessionIT.read(cloner);
      List<byte[]> whole = testPackets(owner.readPackets(readId, 0));
      assertEquals(n, whole.size(), "the owner's read goes on to the end");
      for (int i = 0; i < n; i++) {
        assertEquals(i, TracePacket.parseFrom(whole.get(i)).getForTesting().getSeqValue());
      }
      List<Integer> copied = copy.stream().filter(TracePacket::hasForTesting)
          .map(t -> t.getForTesting().getSeqValue()).toList();
      assertFalse(copied.isEmpty(), "the clone holds what the paused read had not taken yet");
      assertEquals(n - 1, (int) copied.getLast());
      for (int i = 1; i < copied.size(); i++) {
        assertEquals(copied.get(i - 1) + 1, (int) copied.get(i), "the clone's packets are the unread tail, in order");
      }
    }
  }

  /**
   * Producers with this many data sources of about 4 KiB each make a service state of about 6 MiB,
   * past the host's bound on a peer's queue ({@link IpcHost#MAX_SEND_BUFFER_BYTES}).
   */
  static void registerLargeState(SocketFixture f, int producers, int dataSourcesEach) throws Exception {
    for (int i = 0; i < producers; i++) {
      List<DataSourceDescriptor> ds = new ArrayList<>();
      for (int j = 0; j < dataSourcesEach; j++) {
        ds.add(DataSourceDescriptor.newBuilder()
            .setName("large." + i + "." + j + "." + "x".repeat(4000)).build());
      }
      f.closeLater(SocketProducer.connect(f.producerSocket, "many" + i, ds));
    }
  }

  /** The QueryServiceState answer to requestId, its replies merged; null if it failed. */
  static TracingServiceState readState(RawConsumer c, long requestId, long pauseMs)
      throws Exception {
    TracingServiceState.Builder state = TracingServiceState.newBuilder();
    while (true) {
      if (pauseMs > 0) {
        Thread.sleep(pauseMs);
      }
      IPCFrame.InvokeMethodReply r = c.replyTo(requestId);
      assertNotNull(r, "the service closed the connection");
      if (!r.getSuccess()) {
        return null;
      }
      state.mergeFrom(QueryServiceStateResponse.parseFrom(r.getReplyProto()).getServiceState());
      if (!r.getHasMore()) {
        return state.build();
      }
    }
  }

  @Test
  void aSlowReaderOfALargeServiceStateGetsItWholeAndAStuckOneIsDroppedAtTheSendTimeout() throws Exception {
    host.consumerSendTimeoutMs(1500);
    registerLargeState(this, 3, 500);
    TracingConsumer other = consumer();
    try (RawConsumer slow = RawConsumer.connect(consumerSocket);
        RawConsumer stuck = RawConsumer.connect(consumerSocket)) {
      var query = QueryServiceStateRequest.getDefaultInstance();
      for (int i = 0; i < 3; i++) {
        stuck.invoke("QueryServiceState", query); // and never reads
      }
      var state = readState(slow, slow.invoke("QueryServiceState", query), 5);
      assertNotNull(state);
      assertEquals(1500, state.getDataSourcesList().stream()
          .filter(d -> d.getDsDescriptor().getName().startsWith("large.")).map(d -> d.getDsDescriptor().getName())
          .distinct().count(), "every data source, once");
      assertEquals(3, state.getProducersCount());
      assertTrue(state.getSerializedSize() > IpcHost.MAX_SEND_BUFFER_BYTES,
          "larger than a peer's queue may be: " + state.getSerializedSize());

      long start = System.nanoTime();
      assertEquals(1500, other.queryServiceState(false).get(5, TimeUnit.SECONDS).getDataSourcesCount());
      long queryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(queryMs < 2000, "another client waited " + queryMs + " ms");

      waitFor(() -> host.consumerHostStats().sendTimeouts() == 1);
      assertEquals(0, host.consumerHostStats().sendOverflows(), "paced, never past the queue's bound");
      assertNotNull(other.queryServiceState(true).get(5, TimeUnit.SECONDS));
    }
  }

  @Test
  void queriesPastTheQueuedAnswersBoundAreRefusedAndTheOthersAnsweredWhole() throws Exception {
    registerLargeState(this, 1, 600); // 2.4 MiB: the first answer waits for the socket
    try (RawConsumer flooder = RawConsumer.connect(consumerSocket)) {
      var query = QueryServiceStateRequest.getDefaultInstance();
      int n = PacedReplies.MAX_QUEUED_STREAMS + 4;
      List<Long> ids = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        ids.add(flooder.invoke("QueryServiceState", query));
      }
      Thread.sleep(300); // all arrived while the first answer waits for the socket
      Map<Long, TracingServiceState.Builder> answers = new HashMap<>();
      int refused = 0;
      int whole = 0;
      while (whole + refused < n) {
        IPCFrame f = flooder.next();
        assertNotNull(f);
        IPCFrame.InvokeMethodReply r = f.getMsgInvokeMethodReply();
        if (!r.getSuccess()) {
          refused++;
          continue;
        }
        var state = answers.computeIfAbsent(f.getRequestId(), id -> TracingServiceState.newBuilder());
        state.mergeFrom(QueryServiceStateResponse.parseFrom(r.getReplyProto()).getServiceState());
        if (!r.getHasMore()) {
          assertEquals(600, state.getDataSourcesCount());
          whole++;
        }
      }
      assertEquals(PacedReplies.MAX_QUEUED_STREAMS, whole);
      assertEquals(4, refused);
    }
    assertEquals(0, host.consumerHostStats().dropped());
  }

  @Test
  void eventsObservedWhileTheSocketIsBehindComeMergedAfterWhatWasQueuedBefore() throws Exception {
    registerLargeState(this, 2, 500); // about 4 MiB: the socket stays behind until it is read
    producer("events");
    try (RawConsumer c = RawConsumer.connect(consumerSocket)) {
      long observe = c.invoke("ObserveEvents", ObserveEventsRequest.newBuilder()
          .addEventsToObserve(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES)
          .addEventsToObserve(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED).build());
      long query = c.invoke("QueryServiceState", QueryServiceStateRequest.getDefaultInstance());
      Thread.sleep(200);
      enable(c, config(256, DISCARD)); // its data source starts while the answer waits for the socket
      Thread.sleep(300);
      boolean answered = false;
      ObservableEvents.Builder events = ObservableEvents.newBuilder();
      int eventReplies = 0;
      while (!events.getAllDataSourcesStarted()) {
        IPCFrame f = c.next();
        assertNotNull(f);
        IPCFrame.InvokeMethodReply r = f.getMsgInvokeMethodReply();
        if (f.getRequestId() == query) {
          answered = !r.getHasMore();
        } else if (f.getRequestId() == observe) {
          assertTrue(answered, "an event went past the answer queued before it");
          events.mergeFrom(ObserveEventsResponse.parseFrom(r.getReplyProto()).getEvents());
          eventReplies++;
        }
      }
      assertEquals(1, eventReplies, "what happened meanwhile comes in one reply");
      assertEquals(1, events.getInstanceStateChangesCount());
      ObservableEvents.DataSourceInstanceStateChange change = events.getInstanceStateChanges(0);
      assertEquals(DS, change.getDataSourceName());
      assertEquals("events", change.getProducerName());
      assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED, change.getState());
    }
    assertEquals(0, host.consumerHostStats().dropped());
  }

  /**
   * A session of c with n packets of about 1 KB, stopped, and a ReadBuffers that c does not read
   * yet (paused on the full socket by now); returns its request id.
   */
  private static long pausedRead(RawConsumer c, SocketProducer p, int n) throws Exception {
    long enableId = enable(c, config(8 * 1024, DISCARD));
    fill(p, 1, n, 1000);
    disable(c, enableId);
    long readId = c.invoke("ReadBuffers", ReadBuffersRequest.getDefaultInstance());
    Thread.sleep(200);
    return readId;
  }

  private static List<Integer> seqsOf(IPCFrame.InvokeMethodReply r) throws Exception {
    List<Integer> out = new ArrayList<>();
    var packet = new java.io.ByteArrayOutputStream();
    for (var slice : org.jperfetto.protos.ReadBuffersResponse.parseFrom(r.getReplyProto()).getSlicesList()) {
      slice.getData().writeTo(packet);
      if (slice.getLastSliceForPacket()) {
        TracePacket t = TracePacket.parseFrom(packet.toByteArray());
        if (t.hasForTesting()) {
          out.add(t.getForTesting().getSeqValue());
        }
        packet.reset();
      }
    }
    return out;
  }

  private static int sessions(TracingConsumer c) {
    try {
      return c.queryServiceState(true).get(5, TimeUnit.SECONDS).getTracingSessionsCount();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
