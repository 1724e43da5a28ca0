package org.jperfetto.producer.track;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.TrackEventConfig;

/**
 * A TracingProducer carrying one TrackEvent, connected over a real socket to a {@link TrackTestHost}
 * with an SMB set up: {@link #start} a session, emit, {@link #finish} to flush this thread and read
 * the events back.
 */
final class TrackEventFixture implements AutoCloseable {
  static final String DONE = "__done__";

  final TrackTestHost host;
  final TracingProducer producer;
  final TrackEvent trackEvent;
  private final Category marker;
  /** Session starts and stops TrackEvent has applied to its categories. */
  private final java.util.concurrent.atomic.AtomicInteger sessionChanges =
      new java.util.concurrent.atomic.AtomicInteger();
  private int doneCount;

  TrackEventFixture(Path dir, Category... categories) throws Exception {
    this(dir, BufferExhaustedPolicy.DROP, categories);
  }

  TrackEventFixture(Path dir, BufferExhaustedPolicy policy, Category... categories) throws Exception {
    String socket = dir.resolve("producer.sock").toString();
    host = new TrackTestHost(socket);
    marker = Category.of("__marker__");
    Category[] all = java.util.Arrays.copyOf(categories, categories.length + 1);
    all[categories.length] = marker;
    trackEvent = TrackEvent.builder().categories(all).processName("track_test").bufferExhaustedPolicy(policy)
        .onSessionsChanged(sessionChanges::incrementAndGet).build();
    producer = TracingProducer.builder("track-test").socketPath(socket)
        .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100)).dataSource(trackEvent.dataSource()).start();
    host.setUpTracing(64, 4096, 16 << 20);
    TrackTestHost.await("track_event registered", () -> host.registered().contains(TrackEvent.DATA_SOURCE_NAME));
  }

  /**
   * Starts instance id with config and waits until this TrackEvent records: the data source is
   * active and the session's categories are enabled (the data source turns active first).
   */
  void start(long id, TrackEventConfig config) throws Exception {
    int changes = sessionChanges.get();
    host.startDataSource(id, config);
    TrackTestHost.await("track_event started", () -> trackEvent.dataSource().isEnabled()
        && sessionChanges.get() > changes);
  }

  /**
   * Emits a marker instant, flushes this thread's writers, and waits for the marker to arrive from
   * every active session (each has its own sequence, committed on its own).
   */
  DecodedEvents finish() throws Exception {
    String doneName = DONE + (doneCount++);
    int sessions = trackEvent.dataSource().activeInstances();
    trackEvent.instant(marker, doneName);
    trackEvent.flush();
    List<TrackTestHost.Packet> packets = host.awaitPackets(doneName, Math.max(1, sessions),
        p -> hasEventNamed(p, doneName));
    DecodedEvents decoded = new DecodedEvents();
    for (TrackTestHost.Packet p : packets) {
      decoded.add(p.writerId(), p.packet());
    }
    return decoded;
  }

  /** Whether the packet carries an event with that name (in its own interned data or inline). */
  private static boolean hasEventNamed(org.jperfetto.protos.TracePacket p, String name) {
    return p.getInternedData().getEventNamesList().stream().anyMatch(n -> n.getName().equals(name))
        || p.getTrackEvent().getName().equals(name);
  }

  @Override
  public void close() {
    producer.close();
    host.close();
  }
}
