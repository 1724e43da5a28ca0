package org.jperfetto.micrometer;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;

/**
 * A handler on a Micrometer TestObservationRegistry, its data source on an in-process service: start
 * a {@link #session()}, observe, stop it and read the trace back ({@link #stop}).
 */
final class ObservationTracing implements AutoCloseable {
  final PerfettoObservationHandler handler;
  final TestObservationRegistry registry = TestObservationRegistry.create();
  final InProcessTracing tracing;

  ObservationTracing() throws Exception {
    this(PerfettoObservationHandler.create());
  }

  ObservationTracing(PerfettoObservationHandler handler) throws Exception {
    this.handler = handler;
    registry.observationConfig().observationHandler(handler);
    tracing = InProcessTracing.start(TracingProducer.builder("micrometer-test").dataSource(handler.dataSource()));
  }

  /** A session recording every default category into a 4 MiB ring buffer; started. */
  InProcessSession session() throws Exception {
    return session(4096);
  }

  /** A session recording every default category into a ring buffer of sizeKb; started. */
  InProcessSession session(int sizeKb) throws Exception {
    TraceConfig config = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(sizeKb))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(TrackEvent.DATA_SOURCE_NAME).setTrackEventConfig(TrackEventConfig.getDefaultInstance())))
        .build();
    return tracing.newSession(config).start();
  }

  /** Stops session and decodes its trace. */
  static RecordedTrace stop(InProcessSession session) throws Exception {
    session.stop();
    return RecordedTrace.of(session.readTrace());
  }

  @Override
  public void close() {
    tracing.close();
    handler.close();
  }
}
