package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.buffer.BufferMemory;
import org.junit.jupiter.api.Test;

/** A session whose buffers cannot all be allocated is refused, and nothing stays allocated. */
class BufferAllocationTest {
  @Test
  void aBufferThatCannotBeAllocatedRefusesTheSessionAndFreesTheOthers() {
    ManualTaskRunner runner = new ManualTaskRunner();
    TracingService service = TracingServiceTest.newService(runner);
    List<MemorySegment> live = new ArrayList<>();
    service.useBufferMemory((size, arena) -> {
      if (size > 64 * 1024 * 1024) {
        throw new OutOfMemoryError("Cannot reserve " + size + " bytes");
      }
      MemorySegment s = BufferMemory.ZEROED.allocate(size, arena);
      live.add(s);
      return s;
    });
    TestConsumer c = new TestConsumer().connect(service, 0);
    TraceConfig config = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(2048))
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(3 * 1024 * 1024))
        .build();
    String error = c.enable(config);
    runner.runUntilIdle();
    assertTrue(error.contains("Failed to allocate trace buffer 2") && error.contains("3145728 KB"), error);
    assertEquals(2, live.size());
    assertTrue(live.stream().noneMatch(s -> s.scope().isAlive()), "the first two buffers were freed");
    // The service goes on: a session that fits starts.
    TestConsumer d = new TestConsumer().connect(service, 0);
    assertEquals("", d.enable(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024)).build()));
  }
}
