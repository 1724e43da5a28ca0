package org.jperfetto.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the handler adds to an Observation, with and without a session recording its category:
 * {@code handler} is its onStart and onStop on one context (the handler's whole share of an
 * observation without events), {@code observation} a whole Observation start and stop through a
 * registry whose only handler is ours (Micrometer's own cost beside it). The session is a
 * RING_BUFFER on the in-process service; with {@code session=false} no session runs and the handler
 * must allocate nothing ({@code -prof gc}: 0 B/op for {@code handler}).
 *
 * <pre>./mvnw -B -pl micrometer -Pbench verify -Djmh.args="ObservationHandlerBench -prof gc"</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ObservationHandlerBench {
  @Param({"false", "true"})
  public boolean session;

  private PerfettoObservationHandler handler;
  private ObservationRegistry registry;
  private Observation.Context context;
  private InProcessTracing tracing;
  private InProcessSession recording;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    handler = PerfettoObservationHandler.create();
    registry = ObservationRegistry.create();
    registry.observationConfig().observationHandler(handler);
    context = new Observation.Context();
    context.setName("bench.observation");
    context.setContextualName("GET /bench");
    if (!session) {
      return;
    }
    tracing = InProcessTracing.start(TracingProducer.builder("micrometer-bench").dataSource(handler.dataSource()));
    recording = tracing.newSession(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(2 * 1024)
            .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(
            DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME)))
        .build()).start();
    if (!handler.category().isEnabled()) {
      throw new IllegalStateException("category micrometer not enabled by the session");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    if (tracing != null) {
      recording.stop();
      tracing.close();
    }
    handler.close();
  }

  /** The handler's onStart and onStop, as the registry calls them around an observation. */
  @Benchmark
  public void handler() {
    handler.onStart(context);
    handler.onStop(context);
  }

  /** A whole observation through Micrometer, with our handler its only one. */
  @Benchmark
  public void observation() {
    Observation.start("bench.observation", registry).stop();
  }
}
