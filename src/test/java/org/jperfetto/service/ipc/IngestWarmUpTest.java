package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.service.ClockSource;
import org.junit.jupiter.api.Test;

class IngestWarmUpTest {
  @Test
  void drivesTheWholeIngestPathOfAPrivateService() {
    IngestWarmUp.Result r = IngestWarmUp.run(ClockSource.jdk(), 8);
    // 64 pages of one chunk each, every round: each one committed in place and freed again.
    assertEquals(8 * 64, r.chunksCommitted());
    assertEquals(2, r.patchesApplied());
    // Read out at the end: the 1 MiB ring buffer holds the last four SMBs' worth (a 4 KiB page
    // holds one chunk of 4080 payload bytes: 204 packets of 19 bytes behind a 1-byte size), and
    // the service appends its trusted fields to each.
    long packetBytes = 4L * 64 * 204 * 19;
    assertTrue(r.bytesRead() > packetBytes, "bytes read: " + r.bytesRead() + ", written: " + packetBytes);
    assertTrue(r.bytesRead() < 2 * packetBytes, "bytes read: " + r.bytesRead() + ", written: " + packetBytes);
  }
}
