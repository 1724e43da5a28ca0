package org.jperfetto.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.SpanRecorder;
import org.jperfetto.producer.track.TrackEvent;

/**
 * An OpenTelemetry {@link SpanProcessor} that writes every span ending while a Perfetto session
 * records the category {@value #CATEGORY} as a TrackEvent slice (docs/opentelemetry.md). It exports
 * nothing and changes no span: the app's own processors and exporters run as before.
 *
 * <p>What maps to what: a span that started and ended on one thread is a slice on that thread's
 * track; any other one is a slice on the process's {@value #LANES} tracks ({@link SpanRecorder}).
 * The slice's name is the span's; its arguments are span.kind, status (and status.description),
 * trace_id, span_id, parent_span_id and the span's attributes (bounded: see the docs); a failed span
 * (status ERROR) has error = true and an "error" instant at its end; span events are instants on the
 * slice's track. Flows: each slice's begin carries its span id as a flow id, and a parent's begin
 * also the ids of its children shown apart from it, so a child on another thread, or in another
 * process that propagated the context (traceparent), is linked from its parent when both are in
 * the trace.
 *
 * <p>Cost: with no session recording {@value #CATEGORY}, {@link #onStart} and {@link #onEnd} are a
 * volatile load and a branch. Recording, a span costs a small entry while it is open (its start
 * thread, for the track and the flows) and the SDK's own {@code toSpanData()} copy at its end.
 */
public final class PerfettoSpanProcessor implements SpanProcessor {
  /** The TrackEvent category of the spans' slices. */
  public static final String CATEGORY = "otel";
  /** The name of the tracks that carry spans that ended on another thread than they started. */
  public static final String LANES = "OpenTelemetry spans";
  /** Spans tracked as open at most; beyond that a span is written as if it started before the session. */
  static final int MAX_OPEN = 100_000;

  private final TrackEvent trackEvent;
  private final SpanRecorder recorder;
  private final TracingProducer producer;
  /** Spans started while a session recorded, not yet ended. */
  private final Map<ReadableSpan, OpenSpan> open = new ConcurrentHashMap<>();
  private final ThreadLocal<RecordedSpan> spans = ThreadLocal.withInitial(RecordedSpan::new);

  private PerfettoSpanProcessor(TrackEvent trackEvent, Category category, TracingProducer producer) {
    this.trackEvent = trackEvent;
    this.recorder = new SpanRecorder(trackEvent, category, LANES);
    this.producer = producer;
  }

  /**
   * A processor with a TrackEvent of its own (category {@value #CATEGORY}); register {@link
   * #trackEvent()}'s data source with the app's {@link TracingProducer}, or use {@link #connect}.
   */
  public static PerfettoSpanProcessor create() {
    return withOwnTrackEvent(null);
  }

  /**
   * A processor that connects this process to the system tracing service (jtraced or traced, found
   * as every producer finds it) as producer producerName, in the background; {@link #shutdown}
   * disconnects it.
   */
  public static PerfettoSpanProcessor connect(String producerName) {
    return connect(TracingProducer.builder(producerName));
  }

  /** As {@link #connect(String)}, with the producer's options (socket, SMB size) set by the caller. */
  public static PerfettoSpanProcessor connect(TracingProducer.Builder producer) {
    return withOwnTrackEvent(Objects.requireNonNull(producer, "producer"));
  }

  /** A processor on a TrackEvent of its own, whose stop closes the open spans; started on producer if any. */
  private static PerfettoSpanProcessor withOwnTrackEvent(TracingProducer.Builder producer) {
    Category category = newCategory();
    Holder h = new Holder();
    TrackEvent te = TrackEvent.builder().categories(category).onSessionStopping(h::stopping).build();
    TracingProducer started = producer == null ? null : producer.dataSource(te.dataSource()).start();
    PerfettoSpanProcessor processor = new PerfettoSpanProcessor(te, category, started);
    h.processor = processor;
    return processor;
  }

  /** The category this processor records under, for a TrackEvent of the app's own. */
  public static Category newCategory() {
    return Category.described(CATEGORY, "OpenTelemetry spans (jperfetto-opentelemetry)");
  }

  /**
   * A processor writing through the app's own trackEvent, whose categories include category (made
   * by {@link #newCategory()}). Spans still open when a session stops are closed only by processors
   * from {@link #create()} or {@link #connect}, which own their TrackEvent's stop.
   */
  public static PerfettoSpanProcessor using(TrackEvent trackEvent, Category category) {
    return new PerfettoSpanProcessor(Objects.requireNonNull(trackEvent, "trackEvent"),
        Objects.requireNonNull(category, "category"), null);
  }

  /** The TrackEvent whose data source ("track_event") carries the spans. */
  public TrackEvent trackEvent() {
    return trackEvent;
  }

  /** The producer {@link #connect} started; null otherwise. */
  public TracingProducer producer() {
    return producer;
  }

  /** Spans dropped for want of a lane (see {@link SpanRecorder#dropped()}). */
  public int dropped() {
    return recorder.dropped();
  }

  /** Spans tracked as open now (for tests). */
  int openSpans() {
    return open.size();
  }

  @Override
  public boolean isStartRequired() {
    return true;
  }

  @Override
  public boolean isEndRequired() {
    return true;
  }

  @Override
  public void onStart(Context parentContext, ReadWriteSpan span) {
    if (!recorder.isEnabled()) {
      return;
    }
    if (open.size() >= MAX_OPEN) {
      return;
    }
    OpenSpan parent = null;
    Span p = Span.fromContextOrNull(parentContext);
    if (p instanceof ReadableSpan rp) {
      parent = open.get(rp);
    }
    open.put(span, new OpenSpan(System.nanoTime(), Thread.currentThread(), parent));
  }

  @Override
  public void onEnd(ReadableSpan span) {
    if (!recorder.isEnabled()) {
      if (!open.isEmpty()) {
        open.remove(span);
      }
      return;
    }
    long end = System.nanoTime();
    OpenSpan started = open.remove(span);
    RecordedSpan r = spans.get();
    r.set(span.toSpanData(), started, end, false);
    try {
      recorder.record(r);
    } finally {
      r.clear();
    }
  }

  /** Writes the spans still open as slices ending now, marked unfinished (a session is stopping). */
  private void closeOpenSpans() {
    if (open.isEmpty()) {
      return;
    }
    // Written into every session recording the category: done only when the last one stops, so a
    // span that ends later is not written twice into another session.
    if (trackEvent.activeSessions() <= 1) {
      long now = System.nanoTime();
      RecordedSpan r = new RecordedSpan();
      for (ReadableSpan span : open.keySet()) {
        OpenSpan started = open.remove(span); // null: it ended meanwhile, and its onEnd wrote it
        if (started != null) {
          r.set(span.toSpanData(), started, now, true);
          recorder.record(r);
          r.clear();
        }
      }
      trackEvent.flush();
    }
  }

  @Override
  public CompletableResultCode shutdown() {
    if (producer != null) {
      producer.close();
    }
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode forceFlush() {
    trackEvent.flush();
    return CompletableResultCode.ofSuccess();
  }

  /** The flow id of a span id (16 hex digits): the id itself, which both ends of a remote call know. */
  static long flowId(SpanContext context) {
    String hex = context.getSpanId();
    long id = 0;
    for (int i = 0; i < hex.length(); i++) {
      id = (id << 4) | Character.digit(hex.charAt(i), 16);
    }
    return id;
  }

  /** Ties the TrackEvent's stop listener to the processor made after it. */
  private static final class Holder {
    volatile PerfettoSpanProcessor processor;

    void stopping() {
      PerfettoSpanProcessor p = processor;
      if (p != null) {
        p.closeOpenSpans();
      }
    }
  }
}
