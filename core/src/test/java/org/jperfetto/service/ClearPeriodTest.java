package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceConfig.BufferConfig.FillPolicy;
import org.junit.jupiter.api.Test;

/** Which sessions clear their incremental state, and how often. */
class ClearPeriodTest {
  private static TraceConfig.Builder buffers(FillPolicy... policies) {
    TraceConfig.Builder b = TraceConfig.newBuilder();
    for (FillPolicy p : policies) {
      TraceConfig.BufferConfig.Builder buf = TraceConfig.BufferConfig.newBuilder().setSizeKb(1024);
      if (p != null) {
        buf.setFillPolicy(p);
      }
      b.addBuffers(buf);
    }
    return b;
  }

  private static TraceConfig.IncrementalStateConfig every(int ms) {
    return TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(ms).build();
  }

  @Test
  void aRingBufferWithoutAPeriodGetsTheServiceDefault() {
    assertEquals(700, ClearPeriod.effectiveMs(buffers(FillPolicy.RING_BUFFER).build(), 700));
    assertEquals(700, ClearPeriod.effectiveMs(buffers((FillPolicy) null).build(), 700), "unset is a ring");
    assertEquals(700, ClearPeriod.effectiveMs(buffers(FillPolicy.DISCARD, FillPolicy.RING_BUFFER).build(), 700));
    assertEquals(0, ClearPeriod.effectiveMs(buffers(FillPolicy.RING_BUFFER).build(), 0), "service default off");
    assertTrue(ClearPeriod.wrapsUnreadable(buffers(FillPolicy.RING_BUFFER).build()));
    // An empty incremental_state_config sets no period either.
    assertTrue(ClearPeriod.wrapsUnreadable(buffers(FillPolicy.RING_BUFFER)
        .setIncrementalStateConfig(TraceConfig.IncrementalStateConfig.getDefaultInstance()).build()));
  }

  @Test
  void theConfigsOwnPeriodWinsAnExplicitZeroIncluded() {
    TraceConfig own = buffers(FillPolicy.RING_BUFFER).setIncrementalStateConfig(every(250)).build();
    assertEquals(250, ClearPeriod.effectiveMs(own, 700));
    TraceConfig never = buffers(FillPolicy.RING_BUFFER).setIncrementalStateConfig(every(0)).build();
    assertEquals(0, ClearPeriod.effectiveMs(never, 700));
    assertFalse(ClearPeriod.wrapsUnreadable(never));
    assertEquals(250, ClearPeriod.effectiveMs(buffers(FillPolicy.DISCARD).setIncrementalStateConfig(every(250))
        .build(), 700), "a discard buffer clears when asked");
  }

  @Test
  void discardBuffersAloneNeverWrapAndGetNoDefault() {
    TraceConfig discard = buffers(FillPolicy.DISCARD, FillPolicy.DISCARD).build();
    assertEquals(0, ClearPeriod.effectiveMs(discard, 700));
    assertFalse(ClearPeriod.wrapsUnreadable(discard));
    assertFalse(ClearPeriod.wrapsUnreadable(TraceConfig.getDefaultInstance()), "no buffer, nothing to wrap");
  }
}
