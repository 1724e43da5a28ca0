package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.Fixtures;

/** jperfetto with nothing on the consumer socket: the real in-process jtraced records the trace. */
@Timeout(60)
class EmbeddedJtracedIT {
  @TempDir
  Path dir;

  @Test
  void recordsThroughAnInProcessJtracedAndRemovesItsSockets() throws Exception {
    Path consumer = dir.resolve("consumer.sock");
    Path producer = dir.resolve("producer.sock");
    Path file = dir.resolve("trace.pftrace");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true),
        new PrintStream(err, true), Map.of("PERFETTO_CONSUMER_SOCK_NAME", consumer.toString()), false);

    int warmUps = JtracedWarmUp.STARTED.get();
    EmbeddedJtraced factory = new EmbeddedJtraced(Map.of("PERFETTO_PRODUCER_SOCK_NAME", producer.toString()));
    Plugins.register(EmbeddedService.Factory.class, factory);
    try {
      int code = Jperfetto.run(new String[] {"-t", "300ms", "-o", file.toString()}, ctx);
      String errText = err.toString(StandardCharsets.UTF_8);
      assertEquals(0, code, errText);
      assertTrue(errText.contains("started an in-process jtraced (consumer " + consumer
          + ", producers " + producer + ")"), errText);
      // Only the jtraced daemon warms its JIT up; jperfetto's own service stays as it is.
      assertEquals(warmUps, JtracedWarmUp.STARTED.get(), "no JIT warm-up for jperfetto's embedded service");
      assertTrue(Thread.getAllStackTraces().keySet().stream()
          .noneMatch(t -> t.getName().equals(JtracedWarmUp.THREAD_NAME)), "no warm-up thread");
    } finally {
      Plugins.unregister(EmbeddedService.Factory.class, factory);
    }

    Trace trace = Trace.parseFrom(Files.readAllBytes(file));
    assertTrue(trace.getPacketList().stream().anyMatch(TracePacket::hasTraceConfig), "trace_config");
    assertTrue(trace.getPacketList().stream().anyMatch(TracePacket::hasClockSnapshot), "clock_snapshot");
    assertTrue(trace.getPacketList().stream().anyMatch(p -> p.hasServiceEvent()
        && p.getServiceEvent().getTracingDisabled()), "tracing_disabled service event");
    assertTrue(trace.getPacketList().stream().anyMatch(TracePacket::hasTraceStats), "trace_stats");
    // The service writes the same kinds of packets as upstream traced v58 does (its own sequence, 1).
    java.util.Set<String> ours = serviceKinds(trace);
    java.util.Set<String> upstream = serviceKinds(Trace.parseFrom(Files.readAllBytes(
        Fixtures.interop("v58producer_v58traced", "trace.pftrace"))));
    assertTrue(ours.containsAll(upstream), "upstream's service packets " + upstream + ", ours " + ours);
    assertFalse(Files.exists(consumer), "the embedded service removed its consumer socket");
    assertFalse(Files.exists(producer), "and its producer socket");
  }

  /** Top-level fields of the service's own packets, trusted header fields and timestamps aside. */
  private static java.util.Set<String> serviceKinds(Trace trace) {
    java.util.Set<String> kinds = new java.util.TreeSet<>();
    for (TracePacket p : trace.getPacketList()) {
      if (p.getTrustedPacketSequenceId() == 1) {
        p.getAllFields().keySet().stream().map(com.google.protobuf.Descriptors.FieldDescriptor::getName)
            .filter(n -> !n.startsWith("trusted_") && !n.equals("timestamp")).forEach(kinds::add);
      }
    }
    return kinds;
  }
}
