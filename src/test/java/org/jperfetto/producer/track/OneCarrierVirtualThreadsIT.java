package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.testing.ChildJvm;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many virtual threads on one carrier, tracing nested slices around sleeps into a tiny SMB, so that
 * events wait for chunks and commits: a TrackEvent call must never unmount its virtual thread in the
 * middle of a packet (a held shared writer would then be out of every other virtual thread's reach
 * until that one runs again). Run in a child JVM whose scheduler has one carrier. With one carrier
 * at most one virtual thread is inside an event at any time unless one unmounted there, so the
 * shared states never grow past the first two; the trace decodes cleanly, and every slice is in it
 * or its loss is marked where trace_processor counts it. A platform thread flushes all along, so
 * that the locks a virtual thread might wait for are often taken.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OneCarrierVirtualThreadsIT {
  static final int THREADS = 2_000;

  @Test
  void virtualThreadsOnOneCarrierWithATinySmbNeverUnmountInsideAnEvent() throws Exception {
    List<String> cmd = ChildJvm.command(List.of("-Djdk.virtualThreadScheduler.parallelism=1",
            "-Djdk.virtualThreadScheduler.maxPoolSize=1", "-XX:ActiveProcessorCount=1"),
        System.getProperty("java.class.path"), OneCarrierVirtualThreadsIT.class.getName());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    boolean ended = p.waitFor(100, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly();
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(ended, "the child hung: " + out);
    assertEquals(0, p.exitValue(), out);
    Map<String, Long> r = new HashMap<>();
    for (String line : out.split("\n")) {
      if (line.startsWith("RESULT ")) {
        for (String kv : line.substring(7).trim().split(" ")) {
          r.put(kv.substring(0, kv.indexOf('=')), Long.parseLong(kv.substring(kv.indexOf('=') + 1)));
        }
      }
    }
    assertTrue(r.containsKey("begins"), out);
    assertEquals(0, r.get("errors"), out);
    assertEquals(2, r.get("states"), "no virtual thread held a state while unmounted: " + out);
    long losses = r.get("losses");
    assertTrue(r.get("begins") == 3L * THREADS || losses > 0, "slices missing without a loss mark: " + out);
    if (losses == 0) {
      assertEquals(THREADS, r.get("wellNestedTracks"), "every track nests request > parse, respond: " + out);
    }
    System.out.println("one carrier: " + out.trim());
  }

  /** The child: records, decodes, prints one RESULT line. */
  public static void main(String[] args) throws Exception {
    Category req = Category.of("req");
    TrackEvent te = TrackEvent.builder().categories(req).processName("one_carrier").build();
    byte[] trace;
    try (InProcessTracing tracing = InProcessTracing.start(TracingProducer.builder("one-carrier")
        .smbSizeHint(4 * 4096).smbPageSizeHint(4096).dataSource(te.dataSource()))) {
      InProcessSession s = tracing.newSession(ThreadsComeAndGoIT.config(16 * 1024)).start();
      // A platform thread that flushes all along: it takes the arbiter's and the drain's locks,
      // where a virtual thread inside an event would otherwise wait, unmounted.
      java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
      Thread flusher = Thread.ofPlatform().start(() -> {
        while (!done.get()) {
          te.instant(req, "flush");
          te.flush();
        }
      });
      ThreadsComeAndGoIT.concurrentRequests(THREADS, te, req);
      done.set(true);
      flusher.join();
      s.stop();
      trace = s.readTrace();
    }
    DecodedEvents d = InProcessTrackEventIT.decode(trace);
    long losses = 0;
    BitSet seen = new BitSet();
    for (TracePacket p : Trace.parseFrom(trace).getPacketList()) {
      int seq = p.getTrustedPacketSequenceId();
      if (seen.get(seq) && p.getPreviousPacketDropped() != 0) {
        losses++; // as trace_processor counts: not on a sequence's first packet
      }
      seen.set(seq);
    }
    long wellNested = 0;
    for (List<DecodedEvents.Event> events : ThreadsComeAndGoIT.byTrack(d).values()) {
      if (events.size() == 6 && ThreadsComeAndGoIT.maxDepth(events) == 2) {
        wellNested++;
      }
    }
    long begins = d.ofType(Type.TYPE_SLICE_BEGIN).size();
    System.out.println("RESULT begins=" + begins + " ends=" + d.ofType(Type.TYPE_SLICE_END).size()
        + " losses=" + losses + " skipped=" + d.skippedAfterLoss + " errors=" + d.errors.size()
        + " states=" + te.virtualThreadStates() + " wellNestedTracks=" + wellNested);
    if (!d.errors.isEmpty()) {
      System.out.println(new ArrayList<>(d.errors).subList(0, Math.min(5, d.errors.size())));
    }
  }
}
