package org.jperfetto.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.concurrent.TimeUnit;
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
 * What the processor costs an app while no Perfetto session records category otel, next to what
 * the OpenTelemetry SDK's own span start+end costs:
 * <ul>
 *   <li>{@code sdkSpan}: start+end of a span with the SDK and a processor that does nothing (with
 *       no processor at all the SDK hands out spans that record nothing);</li>
 *   <li>{@code sdkSpanWithProcessor}: the same with our processor instead;</li>
 *   <li>{@code processorOnly}: the processor's onStart+onEnd alone, on one span made beforehand:
 *       our side, which {@code -prof gc} must show at 0 B/op.</li>
 * </ul>
 * Run: {@code ./mvnw -B -pl opentelemetry -Pbench verify -Djmh.args="SpanProcessorBench -prof gc"}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SpanProcessorBench {
  private SdkTracerProvider plain;
  private SdkTracerProvider withProcessor;
  private Tracer plainTracer;
  private Tracer processedTracer;
  private PerfettoSpanProcessor processor;
  private ReadWriteSpan span;
  private final Context parent = Context.root();

  @Setup
  public void setUp() {
    processor = PerfettoSpanProcessor.create(); // registered with no producer: no session ever records
    plain = SdkTracerProvider.builder().addSpanProcessor(new NothingProcessor()).build();
    withProcessor = SdkTracerProvider.builder().addSpanProcessor(processor).build();
    plainTracer = plain.get("bench");
    processedTracer = withProcessor.get("bench");
    span = (ReadWriteSpan) processedTracer.spanBuilder("made once").startSpan();
  }

  @TearDown
  public void tearDown() {
    plain.close();
    withProcessor.close();
  }

  /** A processor that asks for every start and end and does nothing with them. */
  static final class NothingProcessor implements SpanProcessor {
    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return true;
    }

    @Override
    public void onEnd(ReadableSpan span) {}

    @Override
    public boolean isEndRequired() {
      return true;
    }
  }

  @Benchmark
  public void sdkSpan() {
    plainTracer.spanBuilder("op").startSpan().end();
  }

  @Benchmark
  public void sdkSpanWithProcessor() {
    processedTracer.spanBuilder("op").startSpan().end();
  }

  @Benchmark
  public Span processorOnly() {
    processor.onStart(parent, span);
    processor.onEnd(span);
    return span;
  }
}
