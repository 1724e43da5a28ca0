package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.service.ClockSource;
import org.junit.jupiter.api.Test;

class IngestWarmUpTest {
  @Test
  void stopsAtTheNextRoundWhenAskedTo() {
    int[] asked = {0};
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 100, () -> ++asked[0] > 3);
    assertEquals(3 * 64, r.chunksCommitted(), "three rounds ran, then the ring half and the discard half stopped");
  }

  @Test
  void drivesTheWholeIngestPathOfAPrivateService() {
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 8);
    // 64 pages of one chunk each, every round: each one committed in place and freed again.
    assertEquals(8 * 64, r.chunksCommitted());
    assertEquals(2, r.patchesApplied());
    // Each half (a ring session, then a DISCARD one) is read out at its end. The DISCARD buffer
    // keeps all its 4 rounds: at least 150 whole packets of 19 bytes in each 4 KiB chunk, plus
    // the trusted fields the service appends to each; the ring keeps what its 1 MiB holds.
    long discardHalf = 4L * 64 * 150 * 19;
    assertTrue(r.bytesRead() > discardHalf, "bytes read: " + r.bytesRead());
    assertTrue(r.bytesRead() < 4 * discardHalf, "bytes read: " + r.bytesRead());
  }
}
