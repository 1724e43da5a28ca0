package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jperfetto-tools aot-training}, the workload of the image build's training run
 * (scripts/train-image.sh): it records the session its config describes and, in the same JVM, traces
 * the common event shapes into it through a producer. That run's other client, {@code jperfetto demo
 * --system}, is the product's own command (DemoIT, PackagingIT).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AotTrainingIT {
  @TempDir Path dir;
  final ByteArrayOutputStream out = new ByteArrayOutputStream();
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(ServiceHost jtraced, String... args) {
    ToolContext ctx = new ToolContext(new PrintStream(out, true), new PrintStream(err, true),
        Map.of(ToolContext.CONSUMER_ENV, jtraced.consumerSocket(),
            ToolContext.PRODUCER_ENV, dir.resolve("p.sock").toString()));
    String[] argv = new String[args.length + 1];
    argv[0] = AotTraining.NAME;
    System.arraycopy(args, 0, argv, 1, args.length);
    return Tools.run(argv, ctx);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private ServiceHost jtraced() throws Exception {
    return ServiceHost.start(
        ServiceHost.Options.of(dir.resolve("p.sock").toString(), dir.resolve("c.sock").toString()));
  }

  @Test
  void recordsTheSessionWithTheTrainingEventsInIt() throws Exception {
    // The image's training config with a buffer that keeps the start of every sequence (its ring
    // buffer overwrites the interned names this test reads).
    Path cfg = dir.resolve("training.pbtxt");
    Files.writeString(cfg, Files.readString(Path.of("core/src/main/jlink/training.pbtxt"))
        .replace("buffers { size_kb: 16384 }", "buffers { size_kb: 131072 fill_policy: DISCARD }"));
    assertTrue(Files.readString(cfg).contains("DISCARD"), "the training config still sets its buffer so");
    Path trace = dir.resolve("training.pftrace");
    try (ServiceHost jtraced = jtraced()) {
      assertEquals(0, run(jtraced, cfg.toString(), "-o", trace.toString()), err());
    }
    assertTrue(err().matches("(?s).*jperfetto-tools aot-training: traced [1-9][0-9]* iterations.*"), err());
    List<TracePacket> packets = Trace.parseFrom(Files.readAllBytes(trace)).getPacketList();
    Set<String> categories = packets.stream().filter(TracePacket::hasInternedData)
        .flatMap(p -> p.getInternedData().getEventCategoriesList().stream())
        .map(c -> c.getName()).collect(Collectors.toSet());
    assertTrue(categories.contains(AotTraining.SLICES), categories.toString());
    Set<String> names = packets.stream().filter(TracePacket::hasInternedData)
        .flatMap(p -> p.getInternedData().getEventNamesList().stream())
        .map(c -> c.getName()).collect(Collectors.toSet());
    assertTrue(names.containsAll(Set.of("parse", "render", "idle")), names.toString());
    long slices = packets.stream().filter(p -> p.hasTrackEvent()
        && p.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN).count();
    long counters = packets.stream().filter(p -> p.hasTrackEvent()
        && p.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_COUNTER).count();
    assertTrue(slices > 1000 && counters > 100, "slices " + slices + ", counters " + counters);
    // A thread per ITERATIONS_PER_THREAD iterations, each its own sequence with its own start.
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("traced ([0-9]+) iterations").matcher(err());
    assertTrue(m.find(), err());
    long iterations = Long.parseLong(m.group(1));
    long threads = (iterations + AotTraining.ITERATIONS_PER_THREAD - 1) / AotTraining.ITERATIONS_PER_THREAD;
    Set<Integer> sequencesWithSlices = packets.stream().filter(p -> p.hasTrackEvent()
        && p.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN)
        .map(TracePacket::getTrustedPacketSequenceId).collect(Collectors.toSet());
    assertEquals(threads, sequencesWithSlices.size(), iterations + " iterations");
    Set<Integer> sequencesStarted = packets.stream().filter(p -> (p.getSequenceFlags()
        & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0)
        .map(TracePacket::getTrustedPacketSequenceId).collect(Collectors.toSet());
    assertTrue(sequencesStarted.containsAll(sequencesWithSlices), "each thread's sequence starts with its state");
  }

  @Test
  void aSessionWithoutTrackEventsStillRecordsAndSaysTheCachesGetNoProducerProfiles() throws Exception {
    Path cfg = dir.resolve("no-te.pbtxt");
    Files.writeString(cfg, "buffers { size_kb: 1024 }\nduration_ms: 200\n");
    Path trace = dir.resolve("no-te.pftrace");
    try (ServiceHost jtraced = jtraced()) {
      assertEquals(0, run(jtraced, cfg.toString(), "-o", trace.toString()), err());
    }
    assertTrue(err().contains("never enabled jperfetto.training"), err());
    assertTrue(err().contains("traced 0 iterations"), err());
    assertTrue(Files.size(trace) > 0, "the session's own trace is still written");
  }

  @Test
  void aMissingOrBadConfigIsAnErrorBeforeAnySession() throws Exception {
    Path bad = dir.resolve("bad.pbtxt");
    Files.writeString(bad, "buffers { size_kb: oops }\n");
    try (ServiceHost jtraced = jtraced()) {
      assertEquals(1, run(jtraced, dir.resolve("missing.pbtxt").toString()), err());
      assertTrue(err().contains("cannot read"), err());
      assertEquals(1, run(jtraced, bad.toString()), err());
      assertEquals(1, run(jtraced), err());
    }
  }
}
