package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jperfetto.service.ipc.SessionIT.config;
import static org.jperfetto.service.ipc.SessionIT.waitFor;

import com.google.protobuf.MessageLite;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.AttachRequest;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.EnableTracingRequest;
import org.jperfetto.protos.EnableTracingResponse;
import org.jperfetto.protos.IPCFrame;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsRequest;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.ServiceLimits;
import org.junit.jupiter.api.Test;

/**
 * Consumers out to hurt the service: floods of EnableTracing, CloneSession, Attach and
 * ObserveEvents sent without waiting, and a uid that takes every session it may with every buffer
 * it may. Each gets an answer that says no, the service stays up and serves the others meanwhile,
 * and its trace buffers stay within the memory cap.
 */
class HostileConsumersIT extends SocketFixture {
  static final int FLOOD = 500;

  @Test
  void floodsOfEnableCloneAttachAndObserveAreAnsweredAndOthersAreServedMeanwhile() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer other = consumer();
    try (RawConsumer flooder = RawConsumer.connect(consumerSocket)) {
      TraceConfig small = config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER);
      List<MessageLite> requests = List.of(
          EnableTracingRequest.newBuilder().setTraceConfig(small).build(),
          CloneSessionRequest.newBuilder().setSessionId(12345).build(),
          AttachRequest.newBuilder().setKey("nobody detached this").build(),
          ObserveEventsRequest.newBuilder().addEventsToObserve(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED)
              .addEventsToObserve(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES).build());
      Set<Long> pending = new HashSet<>();
      for (int i = 0; i < FLOOD; i++) {
        for (MessageLite r : requests) {
          String name = r.getClass().getSimpleName();
          pending.add(flooder.invoke(name.substring(0, name.length() - "Request".length()), r));
        }
      }
      // Meanwhile another consumer records a session end to end and queries the service.
      long start = System.nanoTime();
      assertNotNull(other.queryServiceState(true).get(5, TimeUnit.SECONDS));
      long queryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(queryMs < 2000, "another client waited " + queryMs + " ms");

      // Every request is answered (streams that ended, failures, refusals), none twice.
      int enableRefusals = 0;
      int cloneRefusals = 0;
      int attachFailures = 0;
      Set<Long> ended = new HashSet<>();
      while (ended.size() < pending.size() - 1) { // the last ObserveEvents stream stays open
        IPCFrame f = flooder.next();
        assertNotNull(f, "the service dropped a flooder whose replies it could still send");
        IPCFrame.InvokeMethodReply r = f.getMsgInvokeMethodReply();
        if (r.getHasMore()) {
          continue; // an ObserveEvents event
        }
        assertTrue(pending.contains(f.getRequestId()) && ended.add(f.getRequestId()), "answered once");
        if (!r.getSuccess()) {
          if (f.getRequestId() % 4 == 0) {
            attachFailures++;
          } else {
            assertEquals(2, f.getRequestId(), "only the first EnableTracing fails: the next replaced it");
          }
          continue;
        }
        if (f.getRequestId() % 4 == 2) { // EnableTracing is the first of each four requests
          EnableTracingResponse e = EnableTracingResponse.parseFrom(r.getReplyProto());
          if (e.getDisabled() && !e.getError().isEmpty()) {
            enableRefusals++;
          }
        } else if (f.getRequestId() % 4 == 3) {
          CloneSessionResponse c = CloneSessionResponse.parseFrom(r.getReplyProto());
          assertFalse(c.getSuccess());
          assertTrue(c.getError().contains("not found") || c.getError().contains("already attached"), c.getError());
          cloneRefusals++;
        }
      }
      assertEquals(FLOOD - 1, enableRefusals, "one session, the rest refused with a reason");
      assertEquals(FLOOD, cloneRefusals);
      assertEquals(FLOOD, attachFailures, "Attach without a detached session fails");
      assertEquals(1, sessions(other), "the flooder holds one session");
      p.await(org.jperfetto.protos.GetAsyncCommandResponse.CmdCase.START_DATA_SOURCE); // of its session
    }
    waitFor(() -> sessions(other) == 0);
    TracingSession s = other.enableTracing(config(64, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
    assertTrue(p.startedWriter(2).write(SessionIT.packet(1, 0, 10), false));
    p.commit();
    assertEquals(1, SessionIT.stopAndRead(other, s).stream().filter(TracePacket::hasForTesting).count(),
        "a session after the flood is complete");
  }

  @Test
  void everySessionWithEveryBufferIsRefusedPastTheLimitsAndTheCapHolds() throws Exception {
    host.close();
    long cap = 4L << 20;
    host = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket).withMaxBufferBytes(cap));
    TraceConfig.Builder most = TraceConfig.newBuilder();
    for (int i = 0; i < ServiceLimits.MAX_BUFFERS_PER_SESSION; i++) {
      most.addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4)); // 512 KiB a session
    }
    TraceConfig oneTooMany = most.clone().addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4)).build();
    TraceConfig over = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb((int) (cap >> 10) + 4)).build();
    TracingConsumer probe = consumer();
    for (int i = 0; i < ServiceLimits.MAX_SESSIONS_PER_UID; i++) {
      TracingConsumer c = consumer();
      assertTrue(refusal(c, oneTooMany).contains("Too many buffers"));
      assertTrue(refusal(c, over).contains("memory"), refusal(c, over));
      c.enableTracing(most.build());
    }
    waitFor(() -> sessions(probe) == ServiceLimits.MAX_SESSIONS_PER_UID);
    String error = refusal(consumer(), most.build());
    assertTrue(error.contains("limit is 5"), error);
    long start = System.nanoTime();
    TracingServiceState state = probe.queryServiceState(true).get(5, TimeUnit.SECONDS);
    long queryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(queryMs < 2000, "another client waited " + queryMs + " ms");
    long bytes = state.getTracingSessionsList().stream()
        .flatMap(t -> t.getBufferSizeKbList().stream()).mapToLong(kb -> kb * 1024L).sum();
    assertEquals(ServiceLimits.MAX_SESSIONS_PER_UID * 512L * 1024, bytes);
    assertTrue(bytes <= cap);
    assertEquals(0, host.consumerHostStats().dropped(), "refused, not dropped");
  }

  private static String refusal(TracingConsumer c, TraceConfig cfg) throws Exception {
    var disabled = c.enableTracing(cfg).disabled().get(5, TimeUnit.SECONDS);
    assertFalse(disabled.ok());
    return disabled.error();
  }

  private static int sessions(TracingConsumer c) {
    try {
      return c.queryServiceState(true).get(5, TimeUnit.SECONDS).getTracingSessionsCount();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
