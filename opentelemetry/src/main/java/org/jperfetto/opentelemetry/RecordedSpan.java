package org.jperfetto.opentelemetry;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import org.jperfetto.producer.track.EventContext;
import org.jperfetto.producer.track.SpanRecorder;

/**
 * One ended span as {@link SpanRecorder} reads it: the SDK's SpanData, its start as the processor
 * saw it, and its end on System.nanoTime()'s clock. Reused per thread ({@link #set}, {@link #clear}).
 */
final class RecordedSpan implements SpanRecorder.Span {
  /** The start thread of a span whose start the processor did not see: never the current thread. */
  private static final Thread UNKNOWN_THREAD = new Thread(() -> { }, "unknown");

  private SpanData data;
  private OpenSpan started;
  private long endNanos;
  private boolean unfinished;
  private List<EventData> events;
  private long[] childFlows;
  private final SpanArgs args = new SpanArgs();

  void set(SpanData data, OpenSpan started, long endNanos, boolean unfinished) {
    this.data = data;
    this.started = started;
    this.endNanos = endNanos;
    this.unfinished = unfinished;
    this.events = data.getEvents();
    this.childFlows = started == null ? null : started.end();
  }

  void clear() {
    data = null;
    started = null;
    events = null;
    childFlows = null;
  }

  @Override
  public String name() {
    return data.getName();
  }

  @Override
  public long startNanos() {
    if (started != null) {
      return started.startNanos;
    }
    // Started before the session: as long before the end as the SDK's clock says.
    return endNanos - Math.max(0, data.getEndEpochNanos() - data.getStartEpochNanos());
  }

  @Override
  public long endNanos() {
    return endNanos;
  }

  @Override
  public Thread startThread() {
    return started != null ? started.startThread : UNKNOWN_THREAD;
  }

  @Override
  public boolean failed() {
    return data.getStatus().getStatusCode() == StatusCode.ERROR;
  }

  @Override
  public void writeArgs(EventContext event) {
    args.write(data, event);
    if (unfinished) {
      event.arg("unfinished", true);
    }
    long own = PerfettoSpanProcessor.flowId(data.getSpanContext());
    SpanContext parent = data.getParentSpanContext();
    if (parent.isValid() && linksToParent(parent)) {
      // A parent still open takes this span's id for its own begin, so the arrow goes from it to
      // each such child (flows have no fan-out: ids continued from one slice make a chain).
      // A remote parent, or one written already, is linked through the parent's own id.
      OpenSpan open = started == null ? null : started.parent;
      if (open == null || parent.isRemote() || !open.tryAddChildFlow(own)) {
        event.flow(PerfettoSpanProcessor.flowId(parent));
      }
    }
    event.flow(own);
    if (childFlows != null) {
      for (long child : childFlows) {
        event.flow(child);
      }
    }
  }

  /**
   * Whether the slice shows its parent by a flow rather than by nesting: a remote parent, or a
   * local one that began on another thread, or this span left its thread's track.
   */
  private boolean linksToParent(SpanContext parent) {
    if (parent.isRemote() || started == null) {
      return true;
    }
    Thread start = started.startThread;
    Thread parentStart = started.parent == null ? null : started.parent.startThread;
    return parentStart != start || start != Thread.currentThread() || unfinished;
  }

  @Override
  public int eventCount() {
    return Math.min(events.size(), SpanArgs.MAX_EVENTS);
  }

  @Override
  public long eventNanos(int index) {
    // Relative to the start: an unfinished span's data has no end yet.
    return startNanos() + (events.get(index).getEpochNanos() - data.getStartEpochNanos());
  }

  @Override
  public String eventName(int index) {
    return events.get(index).getName();
  }

  @Override
  public void writeEventArgs(int index, EventContext event) {
    args.writeAttributes(events.get(index).getAttributes(), event);
  }
}
