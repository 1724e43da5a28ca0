package org.jperfetto.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class FlushFlagsTest {
  @Test
  void flushFlagsPackLikeUpstream() {
    assertEquals(0x22, FlushFlags.CMD_TRACE_STOP.bits());
    assertEquals(FlushFlags.Initiator.PERFETTO_CMD, FlushFlags.CMD_TRACE_STOP.initiator());
    assertEquals(FlushFlags.Reason.TRACE_STOP, FlushFlags.CMD_TRACE_STOP.reason());
    assertEquals(0x34, FlushFlags.of(FlushFlags.Initiator.CONSUMER_SDK, FlushFlags.Reason.EXPLICIT).bits());
    assertEquals(FlushFlags.Reason.UNKNOWN, new FlushFlags(0xF).reason());
  }
}
