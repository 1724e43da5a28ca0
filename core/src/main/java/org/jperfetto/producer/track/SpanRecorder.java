package org.jperfetto.producer.track;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Writes operations known only once they end (another tracer's spans, observations) as TrackEvent
 * slices: the whole slice, its begin at the operation's start and its end at its end, goes out when
 * the bridge learns the operation ended ({@link TrackEvent#beginAt} and friends).
 *
 * <p>Where it goes: an operation that started and ended on the calling thread is a slice on that
 * thread's track, where it nests with the thread's other slices by time. Any other one goes on one
 * of the process's <em>lanes</em>, named tracks that share one name ({@link #laneName()}; the
 * Perfetto UI shows tracks of one name in a process as one track). An operation takes the first
 * lane whose slices all ended before it started, so slices on a lane never overlap and the nesting
 * trace_processor rebuilds from begins and ends is always right; there are about as many lanes as
 * operations ever ran at once across threads, at most {@link #MAX_LANES}: beyond that an operation
 * is dropped and counted ({@link #dropped()}) rather than written overlapping another.
 *
 * <p>An operation's events are instants on its slice's track; a failed one gets the argument
 * {@code error = true} and an instant {@value #ERROR_INSTANT} at its end (a mark the timeline shows).
 * Flows and other arguments are the bridge's, written by {@link Span#writeArgs} on the begin.
 *
 * <p>Cost: {@link #record} does nothing but a branch when no session records the category; enabled,
 * it allocates nothing once the names are interned and the lanes exist.
 */
public final class SpanRecorder {
  /** Lanes at most: operations running at once across threads beyond this are dropped. */
  public static final int MAX_LANES = 1024;
  /** The instant that marks a failed operation's end. */
  public static final String ERROR_INSTANT = "error";

  /** One finished operation as the bridge knows it; read only during {@link #record}. */
  public interface Span {
    /** The slice's name. */
    String name();

    /** When it started, on {@link System#nanoTime()}'s clock. */
    long startNanos();

    /** When it ended, on {@link System#nanoTime()}'s clock (not before the start). */
    long endNanos();

    /** The thread it started on (the slice goes on the thread's track if it also ends there). */
    Thread startThread();

    /** Whether it failed. */
    boolean failed();

    /** Writes the begin's debug arguments and flows (the slice's own; the end gets none). */
    void writeArgs(EventContext event);

    /** How many events (instants on the slice's track) it had. */
    default int eventCount() {
      return 0;
    }

    /** When event index happened, on {@link System#nanoTime()}'s clock. */
    default long eventNanos(int index) {
      throw new IndexOutOfBoundsException(index);
    }

    /** Event index's name. */
    default String eventName(int index) {
      throw new IndexOutOfBoundsException(index);
    }

    /** Writes event index's debug arguments. */
    default void writeEventArgs(int index, EventContext event) {
      // no arguments
    }
  }

  private final TrackEvent trackEvent;
  private final Category category;
  private final String laneName;
  private final AtomicReferenceArray<Track> lanes = new AtomicReferenceArray<>(MAX_LANES);
  /** Per lane, the end of its last slice (nanoTime); {@link #FREE} before its first. */
  private final AtomicLongArray laneEnds = new AtomicLongArray(MAX_LANES);
  private final AtomicInteger laneCount = new AtomicInteger();
  private final AtomicInteger dropped = new AtomicInteger();
  private static final long FREE = Long.MIN_VALUE;

  /** The per-thread event functions that write a span's begin, events and error mark. */
  private final ThreadLocal<Writer> writers = ThreadLocal.withInitial(Writer::new);

  /**
   * A recorder writing category's slices through trackEvent, whose cross-thread operations go on
   * lanes named laneName.
   */
  public SpanRecorder(TrackEvent trackEvent, Category category, String laneName) {
    this.trackEvent = Objects.requireNonNull(trackEvent, "trackEvent");
    this.category = Objects.requireNonNull(category, "category");
    this.laneName = Objects.requireNonNull(laneName, "laneName");
    for (int i = 0; i < MAX_LANES; i++) {
      laneEnds.set(i, FREE);
    }
  }

  /** Whether a session records the category (a volatile load). */
  public boolean isEnabled() {
    return category.isEnabled();
  }

  /** The category of every slice. */
  public Category category() {
    return category;
  }

  /** The name the lanes' tracks share. */
  public String laneName() {
    return laneName;
  }

  /** Lanes made so far. */
  public int laneCount() {
    return laneCount.get();
  }

  /** Cross-thread operations dropped since the recorder was made, for want of a free lane. */
  public int dropped() {
    return dropped.get();
  }

  /**
   * Writes span, which ended on the calling thread (or is being closed by it), as a slice with its
   * events. A no-op when no session records the category.
   *
   * @return false when it was dropped for want of a lane; true otherwise
   */
  public boolean record(Span span) {
    if (!category.isEnabled()) {
      return true;
    }
    long start = span.startNanos();
    long end = Math.max(span.endNanos(), start);
    Track track = null;
    if (span.startThread() != Thread.currentThread()) {
      track = claimLane(start, end);
      if (track == null) {
        dropped.incrementAndGet();
        return false;
      }
    }
    Writer w = writers.get();
    w.span = span;
    try {
      String name = span.name();
      if (track == null) {
        trackEvent.beginAt(start, category, name, w.begin);
      } else {
        trackEvent.beginAt(start, category, track, name, w.begin);
      }
      int events = span.eventCount();
      for (int i = 0; i < events; i++) {
        w.event = i;
        long at = Math.min(Math.max(span.eventNanos(i), start), end);
        trackEvent.instantAt(at, category, track, span.eventName(i), w.eventArgs);
      }
      if (span.failed()) {
        trackEvent.instantAt(end, category, track, ERROR_INSTANT, null);
      }
      if (track == null) {
        trackEvent.endAt(end, category, null);
      } else {
        trackEvent.endAt(end, category, track, null);
      }
    } finally {
      w.span = null;
    }
    return true;
  }

  /**
   * text cut to at most maxChars characters, never inside a surrogate pair (the bridges' bound on
   * what a name or argument carries); null stays null.
   */
  public static String bounded(String text, int maxChars) {
    if (text == null || text.length() <= maxChars) {
      return text;
    }
    int end = maxChars;
    if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(0, end);
  }

  /** The track of a lane free over [start, end], now taken up to end; null when none is left. */
  private Track claimLane(long start, long end) {
    int n = laneCount.get();
    for (int i = 0; i < n; i++) {
      long last = laneEnds.get(i);
      if ((last == FREE || last - start <= 0) && laneEnds.compareAndSet(i, last, end)) {
        return lane(i);
      }
    }
    while (true) {
      n = laneCount.get();
      if (n == MAX_LANES) {
        return null;
      }
      if (laneCount.compareAndSet(n, n + 1)) {
        // Another thread may have taken the new lane since the count grew: take the next then.
        long last = laneEnds.get(n);
        if ((last == FREE || last - start <= 0) && laneEnds.compareAndSet(n, last, end)) {
          return lane(n);
        }
      }
    }
  }

  private Track lane(int i) {
    Track t = lanes.get(i);
    if (t == null) {
      lanes.compareAndSet(i, null, Track.named(laneName, i));
      t = lanes.get(i);
    }
    return t;
  }

  /** A thread's reusable event functions over the span being recorded. */
  private static final class Writer {
    Span span;
    int event;
    final TrackEvent.EventFunction begin = ev -> {
      if (span.failed()) {
        ev.arg("error", true);
      }
      span.writeArgs(ev);
    };
    final TrackEvent.EventFunction eventArgs = ev -> span.writeEventArgs(event, ev);
  }
}
