package org.jperfetto.protos;

import static org.jperfetto.protos.ProtoAssertions.assertNoUnknownFields;
import static org.jperfetto.protos.ProtoAssertions.assertReserializes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.TextFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Parses the traces upstream's perfetto CLI and SDK consumer wrote (trace.pftrace) with our Trace
 * and checks them three ways: nothing in them is an unknown field, re-serializing gives the file
 * back (canonical form: packets come from protozero, which pads nested lengths), and the
 * result equals the file's decoding by upstream's own protos (trace.decoded.txtpb, parsed by field
 * name), which catches swapped field numbers. Then it counts the README's events by value.
 */
class TraceFileInteropTest {
  static List<Path> sessions() {
    return InteropCaptures.sessionFolders();
  }

  private static Trace readTrace(Path folder) throws Exception {
    byte[] bytes = Files.readAllBytes(folder.resolve("trace.pftrace"));
    return Trace.parseFrom(bytes, ExtensionRegistry.getEmptyRegistry());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sessions")
  void traceIsFullyModelledAndReserializes(Path folder) throws Exception {
    byte[] bytes = Files.readAllBytes(folder.resolve("trace.pftrace"));
    Trace trace = readTrace(folder);
    assertTrue(trace.getPacketCount() > 600, folder + ": " + trace.getPacketCount() + " packets");
    assertNoUnknownFields(trace, folder.getFileName().toString());
    assertReserializes(ByteString.copyFrom(bytes), trace, folder.getFileName().toString());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sessions")
  void traceEqualsUpstreamsDecodingByFieldName(Path folder) throws Exception {
    Trace.Builder byName = Trace.newBuilder();
    TextFormat.Parser.newBuilder().build()
        .merge(Files.readString(folder.resolve("trace.decoded.txtpb")), byName);
    Trace ours = readTrace(folder);
    assertEquals(byName.getPacketCount(), ours.getPacketCount(), folder + " packet count");
    for (int i = 0; i < ours.getPacketCount(); i++) {
      assertEquals(byName.getPacket(i), ours.getPacket(i), folder + " packet " + i);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sessions")
  @SuppressWarnings("deprecation") // trace_uuid_msb/lsb: what upstream perfetto still sends
  void serviceWritesItsOwnPackets(Path folder) throws Exception {
    Trace trace = readTrace(folder);
    List<TracePacket.DataCase> seen = trace.getPacketList().stream().map(TracePacket::getDataCase).toList();
    for (TracePacket.DataCase expected : List.of(TracePacket.DataCase.CLOCK_SNAPSHOT, TracePacket.DataCase.TRACE_CONFIG,
        TracePacket.DataCase.TRACE_STATS, TracePacket.DataCase.SYSTEM_INFO, TracePacket.DataCase.TRACE_UUID,
        TracePacket.DataCase.SERVICE_EVENT, TracePacket.DataCase.SYNCHRONIZATION_MARKER,
        TracePacket.DataCase.TRACK_DESCRIPTOR, TracePacket.DataCase.TRACK_EVENT)) {
      assertTrue(seen.contains(expected), folder + ": no " + expected + " packet");
    }
    TraceConfig config = trace.getPacketList().stream().filter(TracePacket::hasTraceConfig).findFirst()
        .orElseThrow().getTraceConfig();
    assertEquals(4096, config.getBuffers(0).getSizeKb(), folder + " size_kb");
    assertEquals("track_event", config.getDataSources(0).getConfig().getName(), folder + " data source");
    TracePacket uuid = trace.getPacketList().stream().filter(TracePacket::hasTraceUuid).findFirst().orElseThrow();
    assertTrue(uuid.getTraceUuid().getMsb() != 0 || uuid.getTraceUuid().getLsb() != 0, folder + ": zero uuid");
    if (config.hasTraceUuidMsb()) {
      // The CLI chose the uuid and put it in the config; the service reports the same one.
      assertEquals(config.getTraceUuidMsb(), uuid.getTraceUuid().getMsb(), folder + " uuid msb");
      assertEquals(config.getTraceUuidLsb(), uuid.getTraceUuid().getLsb(), folder + " uuid lsb");
    }
    assertTrue(trace.getPacketList().stream().anyMatch(p -> p.getServiceEvent().getTracingStarted()),
        folder + ": no tracing_started service event");
  }

  /** A slice or counter event, with its name resolved through the sequence's interned data. */
  private record Event(int sequence, TrackEvent.Type type, String name, long trackUuid, TrackEvent event) {}

  private static List<Event> trackEvents(Trace trace) {
    Map<Integer, Map<Long, String>> names = new HashMap<>();
    List<Event> events = new ArrayList<>();
    for (TracePacket p : trace.getPacketList()) {
      int seq = p.getTrustedPacketSequenceId();
      Map<Long, String> seqNames = names.computeIfAbsent(seq, s -> new HashMap<>());
      if ((p.getSequenceFlags() & TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE) != 0) {
        seqNames.clear();
      }
      for (EventName n : p.getInternedData().getEventNamesList()) {
        seqNames.put(n.getIid(), n.getName());
      }
      if (p.hasTrackEvent()) {
        TrackEvent e = p.getTrackEvent();
        String name = e.hasNameIid() ? seqNames.get(e.getNameIid()) : e.getName();
        events.add(new Event(seq, e.getType(), name, e.getTrackUuid(), e));
      }
    }
    return events;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sessions")
  void slicesAndCountersMatchTheReadme(Path folder) throws Exception {
    Trace trace = readTrace(folder);
    boolean sdkConsumer = folder.getFileName().toString().startsWith("sdkconsumer");
    List<Event> events = trackEvents(trace);

    List<Event> begins = events.stream().filter(e -> e.type() == TrackEvent.Type.TYPE_SLICE_BEGIN).toList();
    long ends = events.stream().filter(e -> e.type() == TrackEvent.Type.TYPE_SLICE_END).count();
    assertEquals(sdkConsumer ? 350 : 300, begins.size(), folder + " slices");
    assertEquals(begins.size(), ends, folder + " slice ends");

    List<Event> refSlices = begins.stream().filter(e -> "ref_slice".equals(e.name())).toList();
    assertEquals(300, refSlices.size(), folder + " ref_slice");
    assertEquals(sdkConsumer ? 50 : 0,
        begins.stream().filter(e -> "consumer_self_slice".equals(e.name())).count(), folder + " consumer slices");
    // Each ref_slice carries the debug annotation "i" = 0..299 in order (an int value).
    List<Long> is = refSlices.stream().map(e -> {
      assertEquals(1, e.event().getDebugAnnotationsCount(), folder + " annotations");
      return e.event().getDebugAnnotations(0).getIntValue();
    }).toList();
    assertEquals(IntStream.range(0, 300).mapToObj(i -> (long) i).toList(), is, folder + " i values");

    List<Long> counters = events.stream().filter(e -> e.type() == TrackEvent.Type.TYPE_COUNTER)
        .map(e -> e.event().getCounterValue()).toList();
    assertEquals(IntStream.range(0, 30).mapToObj(i -> i * 10L).toList(), counters, folder + " counter values");
    long counterTrack = events.stream().filter(e -> e.type() == TrackEvent.Type.TYPE_COUNTER)
        .findFirst().orElseThrow().trackUuid();
    TrackDescriptor track = trace.getPacketList().stream().filter(TracePacket::hasTrackDescriptor)
        .map(TracePacket::getTrackDescriptor).filter(t -> t.getUuid() == counterTrack).findFirst().orElse(null);
    assertNotNull(track, folder + ": no descriptor for the counter track");
    assertTrue(track.hasCounter(), folder + ": counter track has no CounterDescriptor");
    assertTrue((track.hasName() ? track.getName() : track.getStaticName()).equals("ref_counter"),
        folder + ": counter track named " + track);
  }
}
