package org.jperfetto.service.ipc;

import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.SEC;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.ring;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.withTriggers;
import static org.jperfetto.service.ipc.SessionIT.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.ServiceLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Configs jtraced refuses over the consumer socket, and its limits: the consumer gets the error
 * text in the EnableTracing reply and the service state is the same before and after.
 */
@Timeout(30)
class SessionRefusalsIT extends SocketFixture {
  static final TraceConfig.TriggerConfig.TriggerMode STOP = TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING;

  /** The refusal error of enabling cfg on a new consumer (with a trace file fd if it writes into one). */
  String refusal(TraceConfig cfg) throws Exception {
    TracingConsumer c = consumer();
    TracingSession s;
    if (cfg.getWriteIntoFile()) {
      int fd = MemFd.create("refused", 0);
      try {
        s = c.enableTracing(cfg, fd);
      } finally {
        Fds.close(fd);
      }
    } else {
      s = c.enableTracing(cfg);
    }
    TracingDisabled d = s.disabled().get(SEC, TimeUnit.SECONDS);
    assertFalse(d.ok(), "refused: " + cfg);
    return d.error();
  }

  TracingServiceState sessions(TracingConsumer c) throws Exception {
    return c.queryServiceState(true).get(SEC, TimeUnit.SECONDS);
  }

  @Test
  void badConfigsAreRefusedWithTheReasonAndChangeNothing() throws Exception {
    SocketProducer p = producer("app");
    TracingConsumer running = consumer();
    running.enableTracing(ring(64).toBuilder().setUniqueSessionName("u").build());
    p.await(CmdCase.START_DATA_SOURCE);
    TracingServiceState before = sessions(running);
    assertEquals(1, before.getNumSessions());

    TraceConfig ok = ring(64);
    TraceConfig.DataSource ds = ok.getDataSources(0);
    TraceConfig.Builder tooManyBuffers = ok.toBuilder();
    for (int i = 0; i < ServiceLimits.MAX_BUFFERS_PER_SESSION; i++) {
      tooManyBuffers.addBuffers(ok.getBuffers(0));
    }
    Map<String, TraceConfig> bad = new LinkedHashMap<>();
    bad.put("positive multiple of 4", ok.toBuilder().setBuffers(0, ok.getBuffers(0).toBuilder().setSizeKb(0)).build());
    bad.put("got 6 for buffer 0", ok.toBuilder().setBuffers(0, ok.getBuffers(0).toBuilder().setSizeKb(6)).build());
    bad.put("no buffers", ok.toBuilder().clearBuffers().build());
    bad.put("Too many buffers configured (129)", tooManyBuffers.build());
    bad.put("out of bounds target_buffer", ok.toBuilder().setDataSources(0, ds.toBuilder()
        .setConfig(ds.getConfig().toBuilder().setTargetBuffer(1))).build());
    bad.put("unique session name (u) already exists", ok.toBuilder().setUniqueSessionName("u").build());
    bad.put("STOP_TRACING/CLONE_SNAPSHOT and write_into_file",
        withTriggers(ok, STOP, 1000, "t", "", 0).toBuilder().setWriteIntoFile(true).build());
    bad.put("positive trigger_timeout_ms",
        withTriggers(ok, TraceConfig.TriggerConfig.TriggerMode.START_TRACING, 0, "t", "", 0));
    bad.put("duration_ms was set", withTriggers(ok, STOP, 100, "t", "", 0).toBuilder().setDurationMs(10).build());
    bad.put("Duplicate trigger name: t", withTriggers(ok, STOP, 100, "t", "", 0).toBuilder()
        .setTriggerConfig(withTriggers(ok, STOP, 100, "t", "", 0).getTriggerConfig().toBuilder()
            .addTriggers(TraceConfig.TriggerConfig.Trigger.newBuilder().setName("t"))).build());
    for (Map.Entry<String, TraceConfig> e : bad.entrySet()) {
      String err = refusal(e.getValue());
      assertTrue(err.contains(e.getKey()), e.getKey() + " -> " + err);
      assertEquals(before, sessions(running), "nothing changed after: " + err);
    }
    // write_into_file without a file: the client sends no fd
    TracingDisabled noFd = consumer().enableTracing(ok.toBuilder().setWriteIntoFile(true).build())
        .disabled().get(SEC, TimeUnit.SECONDS);
    assertTrue(noFd.error().contains("a FD needs to be passed"), noFd.error());
    assertEquals(before, sessions(running));
    p.expectNo(CmdCase.SETUP_DATA_SOURCE, 100);
  }

  @Test
  void fivePerUidThenRefusedAndTheFreedQuotaIsUsableAgain() throws Exception {
    TracingConsumer[] consumers = new TracingConsumer[ServiceLimits.MAX_SESSIONS_PER_UID];
    for (int i = 0; i < consumers.length; i++) {
      consumers[i] = consumer();
      consumers[i].enableTracing(ring(4));
    }
    TracingConsumer probe = consumer();
    SessionIT.waitFor(() -> probe.queryServiceState(true).join().getNumSessions() == consumers.length);
    String err = refusal(ring(4));
    assertTrue(err.contains("for uid " + uid() + " limit is 5"), err);
    assertEquals(consumers.length, sessions(probe).getNumSessions());
    consumers[0].disableTracing().get(SEC, TimeUnit.SECONDS);
    consumers[0].freeBuffers().get(SEC, TimeUnit.SECONDS);
    TracingSession again = consumer().enableTracing(ring(4));
    SessionIT.waitFor(() -> probe.queryServiceState(true).join().getNumSessions() == consumers.length);
    assertFalse(again.disabled().isDone(), "a freed session gives its slot back");
  }

  @Test
  void uniqueSessionNameIsFreeAgainOnceTheSessionEnds() throws Exception {
    TracingConsumer first = consumer();
    TracingSession s = first.enableTracing(ring(4).toBuilder().setUniqueSessionName("only").build());
    assertTrue(refusal(ring(4).toBuilder().setUniqueSessionName("only").build()).contains("already exists"));
    first.disableTracing().get(SEC, TimeUnit.SECONDS);
    s.disabled().get(SEC, TimeUnit.SECONDS);
    first.freeBuffers().get(SEC, TimeUnit.SECONDS);
    TracingSession second = consumer().enableTracing(ring(4).toBuilder().setUniqueSessionName("only").build());
    TracingConsumer probe = consumer();
    SessionIT.waitFor(() -> probe.queryServiceState(true).join().getTracingSessionsList().stream()
        .anyMatch(t -> t.getUniqueSessionName().equals("only")));
    assertFalse(second.disabled().isDone());
  }
}
