package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.protos.TraceConfig;
import org.junit.jupiter.api.Test;

/**
 * The service's limits are upstream's, written here as literals from tracing_service_impl.cc
 * (kMaxBuffersPerConsumer = 128, kMaxConcurrentTracingSessions = 15,
 * kMaxConcurrentTracingSessionsPerUid = 5), not read from our own constants: a changed constant
 * fails here instead of moving the test along with it. Each limit is checked on both sides.
 */
class UpstreamLimitsTest {
  private final TracingService service = TracingServiceTest.newService(new ManualTaskRunner());

  private static TraceConfig buffers(int n) {
    TraceConfig.Builder b = TraceConfig.newBuilder();
    for (int i = 0; i < n; i++) {
      b.addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4));
    }
    return b.build();
  }

  private String enable(int uid) {
    return new TestConsumer().connect(service, uid).enable(buffers(1));
  }

  @Test
  void aSessionMayHave128BuffersNotMore() {
    assertTrue(new TestConsumer().connect(service, 1).enable(buffers(129)).contains("Too many buffers"));
    assertEquals("", new TestConsumer().connect(service, 1).enable(buffers(128)));
  }

  @Test
  void fiveSessionsPerUid() {
    for (int i = 0; i < 5; i++) {
      assertEquals("", enable(7), "session " + (i + 1) + " of uid 7");
    }
    assertTrue(enable(7).contains("for uid 7 limit is 5"));
    assertEquals("", enable(8), "another uid is not limited by uid 7's sessions");
  }

  @Test
  void fifteenSessionsInAll() {
    for (int i = 0; i < 15; i++) {
      assertEquals("", enable(1000 + i), "session " + (i + 1));
    }
    assertTrue(enable(2000).contains("Too many concurrent tracing sessions (15)"));
  }
}
