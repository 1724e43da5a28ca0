package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.protos.TraceConfig;
import org.junit.jupiter.api.Test;

/** The service-wide budget for all sessions' trace buffers (issue 14). */
class BufferBudgetTest {
  static TraceConfig buffersKb(int... sizesKb) {
    TraceConfig.Builder b = TraceConfig.newBuilder();
    for (int kb : sizesKb) {
      b.addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(kb));
    }
    return b.build();
  }

  @Test
  void sessionsPastTheBudgetAreRefusedAndItsMemoryReturnsWhenASessionEnds() {
    ManualTaskRunner runner = new ManualTaskRunner();
    TracingService service = TracingServiceTest.newService(runner);
    service.limitBufferMemory(1024 * 1024);
    TestConsumer a = new TestConsumer().connect(service, 0);
    assertEquals("", a.enable(buffersKb(256, 256)));
    TestConsumer b = new TestConsumer().connect(service, 0);
    String error = b.enable(buffersKb(256, 512));
    assertEquals("Trace buffers of 768 KB exceed the service's buffer memory budget: 512 KB of 1024 KB"
        + " are in use by other sessions (jtraced --max-buffer-memory)", error);
    assertEquals("", b.enable(buffersKb(512)), "exactly up to the budget");
    TestConsumer c = new TestConsumer().connect(service, 0);
    assertTrue(c.enable(buffersKb(4)).contains("exceed the service's buffer memory budget"));
    a.endpoint.freeBuffers();
    runner.runUntilIdle();
    assertEquals("", c.enable(buffersKb(512)), "the first session's buffers are back in the budget");
  }

  @Test
  void oneSessionAloneLargerThanTheBudgetIsRefused() {
    TracingService service = TracingServiceTest.newService(new ManualTaskRunner());
    service.limitBufferMemory(64 * 1024);
    TestConsumer a = new TestConsumer().connect(service, 0);
    assertTrue(a.enable(buffersKb(128)).startsWith("Trace buffers of 128 KB exceed"));
    assertThrows(IllegalArgumentException.class, () -> service.limitBufferMemory(0));
  }
}
