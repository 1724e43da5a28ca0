package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A custom data source traced from many virtual threads at once: they share a few writers (not one
 * each, which used up the SMB's chunks and the writer ids), and nothing is lost.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VirtualThreadDataSourceTest {
  @Test
  void tenThousandVirtualThreadsShareABoundedSetOfWritersAndLoseNothing() throws Exception {
    int n = 10_000;
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 16, 4096, 8 << 20)) {
      DataSource<Void> source = DataSource.named("test.vt");
      source.setUp(new DataSourceInstance<>(1, 0, DataSourceConfig.newBuilder().setName("test.vt").build()),
          sink.arbiter, 1);
      source.activate(0);
      List<Thread> threads = new ArrayList<>();
      int[] maxWriters = new int[1];
      for (int i = 0; i < n; i++) {
        long value = i;
        threads.add(Thread.ofVirtual().start(() -> {
          try {
            Thread.sleep(1); // all of them alive at once
          } catch (InterruptedException e) {
            return;
          }
          source.trace(ctx -> ctx.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, value));
        }));
        if (i % 1000 == 0) {
          maxWriters[0] = Math.max(maxWriters[0], sink.arbiter.activeWriters());
        }
      }
      for (Thread t : threads) {
        t.join();
        maxWriters[0] = Math.max(maxWriters[0], sink.arbiter.activeWriters());
      }
      assertTrue(source.virtualThreadWriterSets() <= DataSource.MAX_VIRTUAL_THREAD_WRITERS,
          "sets: " + source.virtualThreadWriterSets());
      assertTrue(maxWriters[0] <= DataSource.MAX_VIRTUAL_THREAD_WRITERS,
          "writers bounded, not one per virtual thread: " + maxWriters[0]);
      WriterFlush flush = sink.arbiter.startWriterFlush(b -> true);
      while (!flush.poll()) {
        Thread.sleep(1); // the writers are idle: the first poll takes their chunks
      }
      sink.drain();
      BitSet seen = new BitSet(n);
      int packets = 0;
      for (ServiceSide.Read r : sink.service.readAll()) {
        TracePacket p = TracePacket.parseFrom(r.data());
        assertEquals(0, p.getPreviousPacketDropped(), "nothing dropped");
        seen.set((int) p.getTimestamp());
        packets++;
      }
      assertEquals(n, packets, "one packet per virtual thread");
      assertEquals(n, seen.cardinality(), "every virtual thread's packet");
    }
  }
}
