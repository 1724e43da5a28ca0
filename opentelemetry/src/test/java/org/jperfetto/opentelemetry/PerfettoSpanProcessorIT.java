package org.jperfetto.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.SpanRecorder;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SDK's spans through the processor into an in-process session, read back and decoded: threads,
 * cross-thread and remote parents, errors, events, bad input, spans left open at the stop.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PerfettoSpanProcessorIT {
  PerfettoSpanProcessor processor;
  InProcessTracing tracing;
  SdkTracerProvider provider;
  Tracer tracer;

  @BeforeEach
  void setUp() throws Exception {
    processor = PerfettoSpanProcessor.create();
    tracing = InProcessTracing.start(TracingProducer.builder("otel-test")
        .dataSource(processor.trackEvent().dataSource()));
    provider = SdkTracerProvider.builder().addSpanProcessor(processor)
        .setSpanLimits(SpanLimits.builder().setMaxNumberOfAttributes(10_000).setMaxAttributeValueLength(1 << 20)
            .build()).build();
    tracer = provider.get("jperfetto-test");
  }

  @AfterEach
  void tearDown() {
    provider.close();
    tracing.close();
  }

  static TraceConfig config(String... disabled) {
    return TraceConfig.newBuilder().addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(8192))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName("track_event").setTrackEventConfig(TrackEventConfig.newBuilder()
                .addAllDisabledCategories(List.of(disabled))))).build();
  }

  /** Runs work in a session and returns its trace, decoded. */
  TraceEvents record(Runnable work, String... disabled) throws Exception {
    InProcessSession s = tracing.newSession(config(disabled)).start();
    work.run();
    s.stop();
    byte[] trace = s.readTrace();
    // -Dotel.test.keep=DIR keeps each trace, e.g. for trace_processor_shell.
    String keep = System.getProperty("otel.test.keep");
    if (keep != null) {
      java.nio.file.Files.write(java.nio.file.Files.createTempFile(java.nio.file.Path.of(keep), "otel-", ".pftrace"),
          trace);
    }
    return TraceEvents.of(trace);
  }

  @Test
  void spansOfOneThreadNestOnItsTrackWithTheirArgsAndEvents() throws Exception {
    String[] ids = new String[3];
    TraceEvents t = record(() -> {
      Span parent = tracer.spanBuilder("GET /orders").setSpanKind(SpanKind.SERVER)
          .setAttribute("http.request.method", "GET").setAttribute("http.response.status_code", 200L).startSpan();
      try (Scope _ = parent.makeCurrent()) {
        Span child = tracer.spanBuilder("SELECT orders").setSpanKind(SpanKind.CLIENT)
            .setAttribute(AttributeKey.doubleKey("ratio"), 0.5).setAttribute(AttributeKey.booleanKey("cached"), true)
            .setAttribute(AttributeKey.stringArrayKey("tables"), List.of("orders", "items")).startSpan();
        child.addEvent("rows", Attributes.of(AttributeKey.longKey("count"), 3L));
        child.end();
        ids[1] = child.getSpanContext().getSpanId();
        Span failing = tracer.spanBuilder("validate").startSpan();
        failing.setStatus(StatusCode.ERROR, "bad order");
        failing.recordException(new IllegalStateException("no items"));
        failing.end();
        ids[2] = failing.getSpanContext().getSpanId();
      }
      parent.end();
      ids[0] = parent.getSpanContext().getSpanId();
    });
    TraceEvents.Event parent = t.begin("GET /orders");
    TraceEvents.Event child = t.begin("SELECT orders");
    TraceEvents.Event failing = t.begin("validate");
    assertTrue(t.trackName(parent.track()).startsWith("thread:"), t.trackName(parent.track()));
    assertEquals(parent.track(), child.track());
    assertEquals(parent.track(), failing.track());
    assertTrue(parent.timestamp() < child.timestamp() && t.endOf(child) <= t.endOf(parent), "nested by time");

    assertEquals("SERVER", parent.args().get("span.kind"));
    assertEquals("UNSET", parent.args().get("status"));
    assertEquals(ids[0], parent.args().get("span_id"));
    assertEquals(32, ((String) parent.args().get("trace_id")).length());
    assertEquals("GET", parent.args().get("http.request.method"));
    assertEquals(200L, parent.args().get("http.response.status_code"));
    assertEquals(ids[0], child.args().get("parent_span_id"));
    assertEquals(child.args().get("trace_id"), parent.args().get("trace_id"));
    assertEquals(0.5, child.args().get("ratio"));
    assertEquals(true, child.args().get("cached"));
    assertEquals(List.of("orders", "items"), child.args().get("tables"));
    assertEquals(List.of(Long.parseUnsignedLong(ids[1], 16)), child.flows(),
        "a child nested on its parent's track needs no flow: only its own id, for children elsewhere");

    TraceEvents.Event rows = t.named("rows").get(0);
    assertEquals(child.track(), rows.track());
    assertEquals(3L, rows.args().get("count"));
    assertTrue(rows.timestamp() >= child.timestamp() && rows.timestamp() <= t.endOf(child));

    assertEquals("ERROR", failing.args().get("status"));
    assertEquals("bad order", failing.args().get("status.description"));
    assertEquals(true, failing.args().get("error"));
    assertEquals(null, parent.args().get("error"));
    assertEquals("java.lang.IllegalStateException", t.named("exception").get(0).args().get("exception.type"));
    TraceEvents.Event mark = t.named(SpanRecorder.ERROR_INSTANT).get(0);
    assertEquals(t.endOf(failing), mark.timestamp(), "the error mark sits at the span's end");
  }

  @Test
  void aSpanEndingOnAnotherThreadGoesOnALaneAndAChildElsewhereLinksToItsParent() throws Exception {
    String[] ids = new String[3];
    TraceEvents t = record(() -> {
      Span request = tracer.spanBuilder("request").startSpan();
      ids[0] = request.getSpanContext().getSpanId();
      Context withRequest = Context.current().with(request);
      Thread worker = Thread.ofPlatform().name("worker").start(() -> {
        Span task = tracer.spanBuilder("task").setParent(withRequest).startSpan();
        ids[1] = task.getSpanContext().getSpanId();
        task.end();
        request.end(); // ends on the worker: it started on the test thread
      });
      join(worker);
      Span handedOver = tracer.spanBuilder("handed over").startSpan();
      ids[2] = handedOver.getSpanContext().getSpanId();
      join(Thread.ofPlatform().start(handedOver::end));
    });
    TraceEvents.Event request = t.begin("request");
    TraceEvents.Event task = t.begin("task");
    TraceEvents.Event handedOver = t.begin("handed over");
    assertEquals(PerfettoSpanProcessor.LANES, t.trackName(request.track()));
    assertEquals(PerfettoSpanProcessor.LANES, t.trackName(handedOver.track()));
    assertEquals("thread:" + t.tracks.get(task.track()).getThread().getTid(), t.trackName(task.track()));
    long requestFlow = Long.parseUnsignedLong(ids[0], 16);
    long taskFlow = Long.parseUnsignedLong(ids[1], 16);
    assertEquals(List.of(requestFlow, taskFlow), request.flows(),
        "the parent's begin starts the flows of its own id and of its child elsewhere");
    assertEquals(List.of(taskFlow), task.flows(), "the child on another thread continues the latter");
    assertTrue(request.timestamp() < task.timestamp());
    assertEquals(0, processor.dropped());
  }

  @Test
  void aParentLinksToEachChildElsewhereAndALateChildToItsParentsId() throws Exception {
    List<String> children = new ArrayList<>();
    String[] ids = new String[2];
    TraceEvents t = record(() -> {
      Span parent = tracer.spanBuilder("fan out").startSpan();
      Context withParent = Context.current().with(parent);
      for (int i = 0; i < 3; i++) {
        String name = "child " + i;
        join(Thread.ofPlatform().start(() -> {
          Span child = tracer.spanBuilder(name).setParent(withParent).startSpan();
          children.add(child.getSpanContext().getSpanId());
          child.end();
        }));
      }
      Span late = tracer.spanBuilder("late child").setParent(withParent).startSpan();
      parent.end();
      ids[0] = parent.getSpanContext().getSpanId();
      ids[1] = late.getSpanContext().getSpanId();
      join(Thread.ofPlatform().start(late::end));
    });
    List<Long> expected = new ArrayList<>(List.of(Long.parseUnsignedLong(ids[0], 16)));
    children.forEach(id -> expected.add(Long.parseUnsignedLong(id, 16)));
    assertEquals(expected, t.begin("fan out").flows(), "one flow per child, started by the parent");
    for (int i = 0; i < 3; i++) {
      assertEquals(List.of(expected.get(i + 1)), t.begin("child " + i).flows());
    }
    assertEquals(List.of(expected.get(0), Long.parseUnsignedLong(ids[1], 16)), t.begin("late child").flows(),
        "ended after its parent was written: continues the parent's own flow");
  }

  @Test
  void aRemoteParentFromTraceparentLinksToTheCallersSpanId() throws Exception {
    String caller = "00f067aa0ba902b7";
    TraceEvents t = record(() -> {
      Map<String, String> headers = Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-" + caller + "-01");
      Context remote = W3CTraceContextPropagator.getInstance().extract(Context.root(), headers, MapGetter.INSTANCE);
      Span server = tracer.spanBuilder("GET /remote").setSpanKind(SpanKind.SERVER).setParent(remote).startSpan();
      server.end();
    });
    TraceEvents.Event server = t.begin("GET /remote");
    assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", server.args().get("trace_id"));
    assertEquals(caller, server.args().get("parent_span_id"));
    assertEquals(Long.parseUnsignedLong(caller, 16), server.flows().get(0),
        "the caller's span id: the flow its own begin started in its process");
    assertTrue(t.trackName(server.track()).startsWith("thread:"), "still on its thread's track");
  }

  @Test
  void spansStillOpenAtTheStopAreClosedThereAndMarked() throws Exception {
    Span[] open = new Span[1];
    long before = System.nanoTime();
    TraceEvents t = record(() -> {
      open[0] = tracer.spanBuilder("never ends").startSpan();
      open[0].addEvent("halfway");
      tracer.spanBuilder("ends").startSpan().end();
    });
    TraceEvents.Event neverEnds = t.begin("never ends");
    assertEquals(true, neverEnds.args().get("unfinished"));
    assertEquals(null, t.begin("ends").args().get("unfinished"));
    assertTrue(neverEnds.timestamp() >= before && t.endOf(neverEnds) > neverEnds.timestamp());
    assertEquals(1, t.named("halfway").size());
    assertEquals(neverEnds.track(), t.named("halfway").get(0).track());
    open[0].end(); // after the session: nothing, and nothing kept
    assertEquals(0, processor.openSpans());
  }

  @Test
  void absurdSpansAreCutToBoundedEventsWithCounts() throws Exception {
    TraceEvents t = record(() -> {
      var b = tracer.spanBuilder("huge");
      for (int i = 0; i < 1000; i++) {
        b.setAttribute("key" + i, (long) i);
      }
      Span s = b.startSpan();
      s.setAttribute("long", "x".repeat(100_000));
      List<Long> many = new ArrayList<>();
      for (long i = 0; i < 1000; i++) {
        many.add(i);
      }
      s.setAttribute(AttributeKey.longArrayKey("many"), many);
      for (int i = 0; i < 500; i++) {
        s.addEvent("event" + i);
      }
      s.end();
    });
    TraceEvents.Event huge = t.begin("huge");
    long attributes = huge.args().keySet().stream().filter(k -> k.startsWith("key")).count();
    assertEquals(SpanArgs.MAX_ATTRIBUTES, attributes + (huge.args().containsKey("long") ? 1 : 0)
        + (huge.args().containsKey("many") ? 1 : 0), huge.args().keySet().toString());
    assertEquals(1002L, huge.args().get("attributes.count"));
    assertEquals(SpanArgs.MAX_EVENTS, t.events.stream().filter(e -> e.name() != null && e.name().startsWith("event"))
        .count());
    assertEquals(2, t.events.stream().filter(e -> e.track() == huge.track()
        && e.type() != org.jperfetto.protos.TrackEvent.Type.TYPE_INSTANT).count(), "one begin, one end");
  }

  /** Random junk in every field a span has: the trace still decodes, every slice begun is ended. */
  @Test
  void whateverASpanCarriesTheTraceStaysWellFormed() throws Exception {
    java.util.Random random = new java.util.Random(43);
    int spans = 300;
    TraceEvents t = record(() -> {
      for (int i = 0; i < spans; i++) {
        var b = tracer.spanBuilder(junk(random)).setSpanKind(SpanKind.values()[random.nextInt(5)]);
        for (int a = random.nextInt(20); a > 0; a--) {
          switch (random.nextInt(5)) {
            case 0 -> b.setAttribute(junk(random), junk(random));
            case 1 -> b.setAttribute(junk(random), random.nextLong());
            case 2 -> b.setAttribute(junk(random), random.nextDouble() * Double.MAX_VALUE);
            case 3 -> b.setAttribute(AttributeKey.stringArrayKey(junk(random)), List.of(junk(random), ""));
            default -> b.setAttribute(junk(random), random.nextBoolean());
          }
        }
        Span s = b.startSpan();
        for (int e = random.nextInt(4); e > 0; e--) {
          s.addEvent(junk(random), Attributes.of(AttributeKey.stringKey(junk(random)), junk(random)));
        }
        if (random.nextBoolean()) {
          s.setStatus(StatusCode.ERROR, junk(random));
        }
        if (random.nextInt(4) == 0) {
          join(Thread.ofPlatform().start(s::end));
        } else {
          s.end();
        }
      }
    });
    var types = t.events.stream().collect(java.util.stream.Collectors.groupingBy(TraceEvents.Event::type,
        java.util.stream.Collectors.counting()));
    assertEquals((long) spans, types.get(org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN));
    assertEquals((long) spans, types.get(org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_END));
    assertEquals(0, processor.dropped());
  }

  /** A string of any length up to 10000 (empty included) of any chars, lone surrogates and NULs included. */
  private static String junk(java.util.Random random) {
    int n = random.nextInt(8) == 0 ? random.nextInt(10_000) : random.nextInt(12);
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      sb.append((char) random.nextInt(Character.MAX_VALUE + 1));
    }
    return sb.toString();
  }

  @Test
  void withoutASessionRecordingTheCategoryNothingIsWrittenOrKept() throws Exception {
    TraceEvents t = record(() -> {
      Span s = tracer.spanBuilder("hidden").startSpan();
      assertEquals(0, processor.openSpans());
      s.end();
    }, PerfettoSpanProcessor.CATEGORY);
    assertEquals(List.of(), t.named("hidden"));
    Span after = tracer.spanBuilder("after").startSpan();
    after.end();
    assertEquals(0, processor.openSpans());
  }

  @Test
  void spanIdsAreFlowIds() {
    assertNotEquals(0, PerfettoSpanProcessor.flowId(io.opentelemetry.api.trace.SpanContext.create(
        "4bf92f3577b34da6a3ce929d0e0e4736", "ffffffffffffffff", io.opentelemetry.api.trace.TraceFlags.getSampled(),
        io.opentelemetry.api.trace.TraceState.getDefault())));
    assertEquals(0x00f067aa0ba902b7L, PerfettoSpanProcessor.flowId(io.opentelemetry.api.trace.SpanContext.create(
        "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", io.opentelemetry.api.trace.TraceFlags.getSampled(),
        io.opentelemetry.api.trace.TraceState.getDefault())));
    assertFalse(processor.trackEvent().categories().isEmpty());
  }

  private static void join(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  private enum MapGetter implements TextMapGetter<Map<String, String>> {
    INSTANCE;

    @Override
    @SuppressWarnings("deprecation") // deprecated in the SDK, and still abstract: a getter must have it
    public Iterable<String> keys(Map<String, String> carrier) {
      return carrier.keySet();
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  }
}
