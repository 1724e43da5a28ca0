package org.jperfetto.agent;

import org.jperfetto.agent.boot.MethodHooks;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.TrackEvent;

/**
 * Turns the instrumented methods' hook calls into TrackEvent slices of {@link #CATEGORY}, on the
 * thread's own track (a virtual thread's too: TrackEvent gives each one a track of its own).
 *
 * <p>An exit is written only for an enter written in the same session: a method that was running
 * when the session started, or that a session switch cut through, leaves no unmatched end.
 */
final class MethodSlices implements MethodHooks.Sink {
  /** The category of method slices; a track_event config enables it like any other. */
  static final Category CATEGORY = Category.described("jvm.method",
      "Methods the jperfetto agent was configured to turn into slices");

  private final MethodTable table;
  private volatile TrackEvent trackEvent;
  /** Bumped at each session change: open slices counted in an older generation are forgotten. */
  private volatile int generation;
  private final ThreadLocal<Frames> frames = ThreadLocal.withInitial(Frames::new);

  private static final class Frames {
    int generation = -1;
    int depth;
  }

  MethodSlices(MethodTable table) {
    this.table = table;
  }

  void bind(TrackEvent te) {
    this.trackEvent = te;
  }

  /** Called after a session started or stopped: the hooks run only while the category is on. */
  void sessionsChanged() {
    generation++;
    MethodHooks.setEnabled(CATEGORY.isEnabled());
  }

  @Override
  public void enter(int methodId) {
    TrackEvent te = trackEvent;
    String name = table.name(methodId);
    if (te == null || name == null || !CATEGORY.isEnabled()) {
      return;
    }
    Frames f = frames.get();
    int g = generation;
    if (f.generation != g) {
      f.generation = g;
      f.depth = 0;
    }
    te.begin(CATEGORY, name);
    f.depth++;
  }

  @Override
  public void exit(int methodId) {
    TrackEvent te = trackEvent;
    if (te == null) {
      return;
    }
    Frames f = frames.get();
    if (f.generation != generation || f.depth == 0) {
      return;
    }
    f.depth--;
    te.end(CATEGORY);
  }
}
