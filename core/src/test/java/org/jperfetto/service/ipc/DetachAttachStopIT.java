package org.jperfetto.service.ipc;

import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.SEC;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.fileTrace;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.ring;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.seqs;
import static org.jperfetto.service.ipc.ConsumerPortFeaturesIT.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * `perfetto --detach=k` then `perfetto --attach=k --stop` against jtraced, replayed with the
 * upstream CLI's calls: EnableTracing of a write_into_file session with the file's fd, Detach,
 * disconnect; then a new connection: Attach, EnableTracing(attach_notification_only), Flush
 * (timeout 0, flags 34: perfetto_cmd / trace stop), DisableTracing. The attaching consumer must
 * be told the session ended, and the file (owned by the session, not by the connection that
 * passed it) must hold the whole trace.
 */
@Timeout(30)
class DetachAttachStopIT extends SocketFixture {
  /** What perfetto_cmd sends with its final flush after --attach --stop. */
  static final FlushFlags CLI_STOP_FLUSH = new FlushFlags(34);

  @Test
  void attachStopAfterADrainPeriodEndsTheStreamAndTheFileHoldsTheTrace() throws Exception {
    detachThenAttachStop(Duration.ofMillis(400), false); // drains of the period ran while detached
  }

  @Test
  void isDetachedCheckInBetweenHandsTheFileOnTwice() throws Exception {
    detachThenAttachStop(Duration.ofMillis(250), true);
  }

  @Test
  void attachStopRightAwayEndsTheStreamAndTheFileHoldsTheTrace() throws Exception {
    detachThenAttachStop(Duration.ZERO, false);
  }

  /**
   * @param isDetachedCheck a connection attaches and detaches again in between (what
   *     `perfetto --is_detached=k1` does) and goes away
   */
  private void detachThenAttachStop(Duration detachedFor, boolean isDetachedCheck) throws Exception {
    assertEquals(FlushFlags.CMD_TRACE_STOP, CLI_STOP_FLUSH, "34 is perfetto_cmd's trace-stop flush");
    SocketProducer p = producer("app");
    TraceConfig cfg = ring(256).toBuilder().setWriteIntoFile(true).setFileWritePeriodMs(100).build();
    int fd = MemFd.create("detached-trace", 0);
    try {
      try (TracingConsumer first = TracingConsumer.connect(consumerSocket)) {
        first.enableTracing(cfg, fd);
        p.await(CmdCase.START_DATA_SOURCE);
        SmbWriter w = p.writer(1, p.targetBuffers.values().iterator().next());
        write(p, w, 7, 0, 10);
        first.detach("k1").get(SEC, TimeUnit.SECONDS);
        write(p, w, 7, 10, 10); // after the detach, before the detached connection goes
      }
      p.expectNo(CmdCase.STOP_DATA_SOURCE, 200);
      Thread.sleep(detachedFor.toMillis());
      if (isDetachedCheck) {
        try (TracingConsumer check = TracingConsumer.connect(consumerSocket)) {
          check.attach("k1").get(SEC, TimeUnit.SECONDS);
          check.detach("k1").get(SEC, TimeUnit.SECONDS);
        }
        p.expectNo(CmdCase.STOP_DATA_SOURCE, 200);
      }

      TracingConsumer second = consumer();
      TracingSession attached = second.attach("k1").get(SEC, TimeUnit.SECONDS);
      assertTrue(attached.traceConfig().getWriteIntoFile());
      second.flush(Duration.ZERO, CLI_STOP_FLUSH).get(SEC, TimeUnit.SECONDS);
      second.disableTracing().get(SEC, TimeUnit.SECONDS);
      TracingDisabled disabled = attached.disabled().get(SEC, TimeUnit.SECONDS);
      assertTrue(disabled.ok(), disabled.error());

      Trace t = fileTrace(fd);
      assertEquals(SessionIT.range(20), seqs(t.getPacketList(), 7),
          "every packet of the producer, once, in order");
      assertEquals(1, t.getPacketList().stream().filter(TracePacket::hasTraceConfig).count());
      assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceStats), "the last drain ran");
    } finally {
      Fds.close(fd);
    }
  }
}
