package org.jperfetto.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a span costs while a session records category otel: the SDK's span start+end with the
 * processor writing it (begin, end, args: kind, status, ids, two attributes) into an in-process
 * jtraced's RING_BUFFER (-prof gc counts the whole process, service included). Compare with
 * {@link SpanProcessorBench#sdkSpan}.
 * Run: {@code ./mvnw -B -pl opentelemetry -Pbench verify -Djmh.args="SpanRecordingBench -prof gc"}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SpanRecordingBench {
  private InProcessTracing tracing;
  private InProcessSession session;
  private SdkTracerProvider provider;
  private Tracer tracer;

  @Setup
  public void setUp() throws IOException {
    PerfettoSpanProcessor processor = PerfettoSpanProcessor.create();
    tracing = InProcessTracing.start(TracingProducer.builder("bench").dataSource(processor.trackEvent().dataSource()));
    session = tracing.newSession(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(2048)
            .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName("track_event"))).build()).start();
    provider = SdkTracerProvider.builder().addSpanProcessor(processor).build();
    tracer = provider.get("bench");
  }

  @TearDown
  public void tearDown() throws IOException {
    session.stop();
    provider.close();
    tracing.close();
  }

  @Benchmark
  public void recordedSpan() {
    Span s = tracer.spanBuilder("op").setAttribute("http.route", "/orders").setAttribute("items", 3L).startSpan();
    s.end();
  }
}
