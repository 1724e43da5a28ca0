package org.jperfetto.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import java.util.function.BiConsumer;
import org.jperfetto.producer.track.EventContext;
import org.jperfetto.producer.track.SpanRecorder;

/**
 * A span's debug arguments: span.kind, status, status.description, trace_id, span_id,
 * parent_span_id, then its attributes under their own keys. Whatever a span carries, the event
 * stays bounded: at most {@link #MAX_ATTRIBUTES} attributes (then attributes.count says how many
 * there were), {@link #MAX_ARRAY} elements of an array value and {@link #MAX_STRING} characters of
 * a string (never cut inside a surrogate pair); at most {@link #MAX_EVENTS} events become instants.
 */
final class SpanArgs {
  static final int MAX_ATTRIBUTES = 128;
  static final int MAX_ARRAY = 64;
  static final int MAX_STRING = 4096;
  static final int MAX_EVENTS = 128;

  private EventContext event;
  private int written;
  private final BiConsumer<AttributeKey<?>, Object> writer = this::attribute;

  /** Writes the span's own arguments and its attributes. */
  void write(SpanData data, EventContext event) {
    event.arg("span.kind", data.getKind().name());
    event.arg("status", data.getStatus().getStatusCode().name());
    String description = data.getStatus().getDescription();
    if (!description.isEmpty()) {
      event.arg("status.description", cut(description));
    }
    SpanContext context = data.getSpanContext();
    event.arg("trace_id", context.getTraceId());
    event.arg("span_id", context.getSpanId());
    SpanContext parent = data.getParentSpanContext();
    if (parent.isValid()) {
      event.arg("parent_span_id", parent.getSpanId());
    }
    writeAttributes(data.getAttributes(), event);
    int dropped = data.getTotalAttributeCount() - data.getAttributes().size();
    if (dropped > 0) {
      event.arg("attributes.dropped_by_sdk", (long) dropped);
    }
  }

  /** Writes attributes, the first {@link #MAX_ATTRIBUTES} of them (and the count if there were more). */
  void writeAttributes(Attributes attributes, EventContext event) {
    this.event = event;
    this.written = 0;
    try {
      attributes.forEach(writer);
    } finally {
      this.event = null;
    }
    if (attributes.size() > MAX_ATTRIBUTES) {
      event.arg("attributes.count", (long) attributes.size());
    }
  }

  private void attribute(AttributeKey<?> key, Object value) {
    if (written++ >= MAX_ATTRIBUTES) {
      return;
    }
    String name = cut(key.getKey());
    switch (value) {
      case String s -> event.arg(name, cut(s));
      case Long l -> event.arg(name, l.longValue());
      case Double d -> event.arg(name, d.doubleValue());
      case Boolean b -> event.arg(name, b.booleanValue());
      case List<?> list -> array(name, list);
      default -> event.arg(name, cut(String.valueOf(value)));
    }
  }

  private void array(String name, List<?> list) {
    event.beginArray(name);
    int n = Math.min(list.size(), MAX_ARRAY);
    for (int i = 0; i < n; i++) {
      switch (list.get(i)) {
        case String s -> event.add(cut(s));
        case Long l -> event.add(l.longValue());
        case Double d -> event.add(d.doubleValue());
        case Boolean b -> event.add(b.booleanValue());
        case null, default -> event.add(String.valueOf(list.get(i)));
      }
    }
    event.end();
    if (list.size() > MAX_ARRAY) {
      event.arg(name + ".count", (long) list.size());
    }
  }

  private static String cut(String s) {
    return SpanRecorder.bounded(s, MAX_STRING);
  }
}
