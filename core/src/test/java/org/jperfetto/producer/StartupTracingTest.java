package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.jperfetto.ipc.wire.CommitBatch;
import org.jperfetto.protos.DataSourceConfig;
import org.junit.jupiter.api.Test;

/** Placeholder target buffers: held while unbound, rewritten in order once bound, dropped to 0 on abort. */
class StartupTracingTest {
  /** Records what reaches the connection. */
  static final class Sink implements SharedMemoryArbiter.CommitSink {
    final List<String> calls = new ArrayList<>();

    @Override
    public void commitPending() {
      calls.add("commit");
    }

    @Override
    public void registerTraceWriter(int writerId, int targetBuffer) {
      calls.add("register " + writerId + "->" + targetBuffer);
    }

    @Override
    public void unregisterTraceWriter(int writerId) {
      calls.add("unregister " + writerId);
    }
  }

  private static List<String> moves(CommitBatch b) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < b.moves; i++) {
      out.add(b.movePage[i] + ":" + b.moveTargetBuffer[i]);
    }
    return out;
  }

  @Test
  void unboundEntriesAreHeldThenSentFirstWithTheRealBuffer() {
    StartupTracing st = new StartupTracing();
    int a = st.reserve();
    int b = st.reserve();
    assertEquals(1 << 16, a);
    assertEquals(2 << 16, b);
    assertTrue(StartupTracing.isPlaceholder(a) && !StartupTracing.isPlaceholder(7));
    Sink sink = new Sink();
    st.registerTraceWriter(1, a); // before any connection: deferred
    st.connect(sink);
    st.registerTraceWriter(2, 7); // an ordinary writer goes straight through
    assertEquals(List.of("register 2->7"), sink.calls);

    CommitBatch first = new CommitBatch();
    first.addMove(0, 0, a, 4096);
    first.addMove(1, 0, 7, 4096);
    first.addMove(2, 0, b, 4096);
    first.addPatch(1, 5, a, 16, 0x01020304);
    first.flushRequestId = 9;
    st.resolve(first);
    assertEquals(List.of("1:7"), moves(first), "only the bound buffer's chunk goes");
    assertEquals(0, first.patches);
    assertEquals(9, first.flushRequestId, "the flush ack is not held");

    assertTrue(st.bind(a, 42));
    assertFalse(st.bind(a, 43), "bound once");
    assertEquals(List.of("register 2->7", "register 1->42"), sink.calls);
    CommitBatch second = new CommitBatch();
    second.addMove(3, 0, a, 4096);
    st.resolve(second);
    assertEquals(List.of("0:42", "3:42"), moves(second), "held first, in order");
    assertEquals(1, second.patches);
    assertEquals(42, second.patchTargetBuffer[0]);
    assertEquals(0x01020304, second.patchData[0]);

    assertTrue(st.isUnbound(b));
    assertTrue(st.bind(b, StartupTracing.ABORTED));
    CommitBatch third = new CommitBatch();
    st.resolve(third);
    assertEquals(List.of("2:0"), moves(third), "aborted: sent to buffer 0, which the service drops");
    st.registerTraceWriter(3, b);
    assertEquals(2, sink.calls.size(), "no registration for an aborted reservation");
  }

  @Test
  void configsMatchAsideFromWhatTheServiceFillsIn() {
    DataSourceConfig startup = DataSourceConfig.newBuilder().setName("ds").setLegacyConfig("x").build();
    DataSourceConfig fromService = startup.toBuilder().setTargetBuffer(3).setTracingSessionId(77)
        .setTraceDurationMs(1000).setStopTimeoutMs(5000).build();
    assertTrue(StartupTracing.sameRequest(startup, fromService));
    assertFalse(StartupTracing.sameRequest(startup, fromService.toBuilder().setLegacyConfig("y").build()));
    assertFalse(StartupTracing.sameRequest(startup, fromService.toBuilder().setName("other").build()));
  }
}
