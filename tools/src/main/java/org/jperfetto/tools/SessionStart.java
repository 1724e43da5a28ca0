package org.jperfetto.tools;

import java.time.Duration;
import org.jperfetto.producer.track.Category;

/**
 * Waits for a session that enables a category, as a TrackEvent's sessions-changed listener (see
 * {@link org.jperfetto.producer.track.TrackEvent.Builder#onSessionsChanged}). That listener runs
 * once every category of a session is set, so the session's other categories are on too when the
 * wait ends; polling the one category could start tracing before them, and lose their first events.
 */
final class SessionStart implements Runnable {
  private final Category category;
  private boolean started;

  SessionStart(Category category) {
    this.category = category;
  }

  @Override
  public synchronized void run() {
    started = category.isEnabled();
    notifyAll();
  }

  /** Waits until a session has enabled the category; false after timeoutMs without one. */
  synchronized boolean await(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMillis(timeoutMs).toNanos();
    while (!started) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }
}
