package org.jperfetto.micrometer;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ThreadLocalRandom;
import org.jperfetto.producer.track.EventContext;
import org.jperfetto.producer.track.SpanRecorder;

/**
 * What the handler knows of one Observation while it runs: where and when it started, its events,
 * the flows to and from its parent; the names, key values and error are read from its context
 * when it is written. Made in onStart only while a session records the category, kept in the
 * context under {@link #KEY} and in the handler's set of open observations.
 *
 * <p>Written once: by its onStop, or, if a session stops first, closed then and marked
 * {@value #UNFINISHED_ARG} ({@link #tryFinish}). Bounds keep what an observation carries from
 * growing a packet without end: at most {@link #MAX_KEY_VALUES} key values (the rest counted in
 * {@value #DROPPED_KEY_VALUES_ARG}), {@link #MAX_EVENTS} events, {@link #MAX_CHILD_FLOWS} flows to
 * children, and {@link #MAX_TEXT_CHARS} characters per name or value.
 */
final class ObservationRecord implements SpanRecorder.Span {
  /** Where a record sits in its observation's context. */
  static final Object KEY = ObservationRecord.class;

  /** Key values written at most per observation (low then high cardinality). */
  static final int MAX_KEY_VALUES = 64;
  /** Events kept at most per observation (the rest are counted). */
  static final int MAX_EVENTS = 64;
  /** Flows to children on other threads, at most. */
  static final int MAX_CHILD_FLOWS = 64;
  /** Characters kept of a name, a key, a value or an error message. */
  static final int MAX_TEXT_CHARS = 1024;

  /** The argument naming the observation when its contextual name is the slice's name. */
  static final String NAME_ARG = "observation";
  /** The argument carrying a failed observation's exception: its class and message. */
  static final String EXCEPTION_ARG = "exception";
  /** The count of key values beyond {@link #MAX_KEY_VALUES}. */
  static final String DROPPED_KEY_VALUES_ARG = "key_values_dropped";
  /** The count of events beyond {@link #MAX_EVENTS}. */
  static final String DROPPED_EVENTS_ARG = "events_dropped";
  /** Marks an observation still running when the session stopped (its end is the stop). */
  static final String UNFINISHED_ARG = "unfinished";
  /** The slice name of an observation with neither a contextual name nor a name. */
  static final String UNNAMED = "observation";

  /** Flow ids: a random base per process, so two processes' ids in one trace do not meet. */
  private static final AtomicLong NEXT_FLOW = new AtomicLong(ThreadLocalRandom.current().nextLong() | 1);

  private final Observation.Context context;
  private final long startNanos;
  private final Thread startThread;
  private long endNanos;
  private boolean unfinished;
  /** Claimed for writing (guarded by this). */
  private boolean written;

  /** The flow from the parent into this observation, 0 for none. */
  private volatile long parentFlow;
  /** Flows out to children that run elsewhere (guarded by this). */
  private long[] childFlows;
  private int childFlowCount;

  /** Events (guarded by this). */
  private long[] eventNanos;
  private String[] eventNames;
  private int eventCount;
  private int droppedEvents;

  ObservationRecord(Observation.Context context, long startNanos, Thread startThread) {
    this.context = context;
    this.startNanos = startNanos;
    this.startThread = startThread;
  }

  // ---- while it runs ----

  /** Keeps event as an instant at nanoTime (beyond {@link #MAX_EVENTS}, only counts it). */
  synchronized void addEvent(Observation.Event event, long nanoTime) {
    if (eventCount == MAX_EVENTS) {
      droppedEvents++;
      return;
    }
    if (eventNames == null || eventCount == eventNames.length) {
      int n = eventNames == null ? 4 : Math.min(MAX_EVENTS, eventCount * 2);
      eventNames = eventNames == null ? new String[n] : Arrays.copyOf(eventNames, n);
      eventNanos = eventNanos == null ? new long[n] : Arrays.copyOf(eventNanos, n);
    }
    String name = event.getContextualName();
    if (name == null || name.isEmpty()) {
      name = event.getName();
    }
    eventNames[eventCount] = text(name == null || name.isEmpty() ? "event" : name);
    eventNanos[eventCount] = nanoTime;
    eventCount++;
  }

  /**
   * Links this observation to parent with a new flow, unless it has one or the parent was written
   * already (its slice's begin carries the flow out, so it must still be to come).
   */
  void linkToParent(ObservationRecord parent) {
    if (parentFlow != 0) {
      return;
    }
    long id = NEXT_FLOW.getAndIncrement();
    if (parent.addChildFlow(id)) {
      parentFlow = id;
    }
  }

  private synchronized boolean addChildFlow(long id) {
    if (written || childFlowCount == MAX_CHILD_FLOWS) {
      return false;
    }
    if (childFlows == null || childFlowCount == childFlows.length) {
      childFlows = childFlows == null ? new long[2] : Arrays.copyOf(childFlows, Math.min(MAX_CHILD_FLOWS,
          childFlowCount * 2));
    }
    childFlows[childFlowCount++] = id;
    return true;
  }

  /**
   * Claims the record for writing, ending at endNanos: true once, for the first caller (onStop, or
   * the session's stop with unfinished set). Taken under the lock that guards the flows, so a child
   * linking meanwhile either makes it into this begin or is refused.
   */
  synchronized boolean tryFinish(long endNanos, boolean unfinished) {
    if (written) {
      return false;
    }
    written = true;
    this.endNanos = endNanos;
    this.unfinished = unfinished;
    return true;
  }

  // ---- what is written (the span as SpanRecorder reads it) ----

  Observation.Context context() {
    return context;
  }

  /** The slice's name: the contextual name if set, else the observation's name. */
  @Override
  public String name() {
    String name = context.getContextualName();
    if (name == null || name.isEmpty()) {
      name = context.getName();
    }
    return name == null || name.isEmpty() ? UNNAMED : text(name);
  }

  @Override
  public long startNanos() {
    return startNanos;
  }

  @Override
  public long endNanos() {
    return endNanos;
  }

  @Override
  public Thread startThread() {
    return startThread;
  }

  @Override
  public boolean failed() {
    return context.getError() != null;
  }

  boolean unfinished() {
    return unfinished;
  }

  /** The begin's arguments and flows: the name, key values, exception, counts, flows. */
  @Override
  public void writeArgs(EventContext event) {
    String contextual = context.getContextualName();
    if (contextual != null && !contextual.isEmpty() && context.getName() != null) {
      event.arg(NAME_ARG, text(context.getName()));
    }
    int budget = writeKeyValues(event, context.getLowCardinalityKeyValues(), MAX_KEY_VALUES);
    budget = writeKeyValues(event, context.getHighCardinalityKeyValues(), budget);
    if (budget < 0) {
      event.arg(DROPPED_KEY_VALUES_ARG, (long) -budget);
    }
    Throwable error = context.getError();
    if (error != null) {
      String message = error.getMessage();
      event.arg(EXCEPTION_ARG, text(message == null ? error.getClass().getName()
          : error.getClass().getName() + ": " + message));
    }
    if (unfinished) {
      event.arg(UNFINISHED_ARG, true);
    }
    long in = parentFlow;
    if (in != 0) {
      event.terminatingFlow(in);
    }
    synchronized (this) {
      if (droppedEvents > 0) {
        event.arg(DROPPED_EVENTS_ARG, (long) droppedEvents);
      }
      for (int i = 0; i < childFlowCount; i++) {
        event.flow(childFlows[i]);
      }
    }
  }

  /**
   * Writes up to budget key values; returns the budget left, or minus the number that did not fit
   * (counting on from an already negative budget).
   */
  private static int writeKeyValues(EventContext event, KeyValues values, int budget) {
    for (KeyValue kv : values) {
      if (budget <= 0) {
        budget--;
        continue;
      }
      String key = kv.getKey();
      if (key == null || key.isEmpty()) {
        continue;
      }
      event.arg(text(key), text(kv.getValue()));
      budget--;
    }
    return budget;
  }

  @Override
  public synchronized int eventCount() {
    return eventCount;
  }

  @Override
  public synchronized long eventNanos(int index) {
    return eventNanos[index];
  }

  @Override
  public synchronized String eventName(int index) {
    return eventNames[index];
  }

  /** text cut to {@link #MAX_TEXT_CHARS} characters (not inside a surrogate pair); null stays null. */
  static String text(String text) {
    return SpanRecorder.bounded(text, MAX_TEXT_CHARS);
  }
}
