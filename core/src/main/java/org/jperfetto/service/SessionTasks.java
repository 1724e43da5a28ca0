package org.jperfetto.service;

import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Delayed work on a tracing session, in one place: the task is posted on the service thread,
 * and when it runs the session is looked up again by id (it may have been freed meanwhile) and
 * the task runs only if the session still exists and still wants it.
 */
final class SessionTasks {
  private final TaskRunner runner;
  private final ServiceState state;

  /** @param state holds the live sessions by id, looked up when a task runs */
  SessionTasks(TaskRunner runner, ServiceState state) {
    this.runner = runner;
    this.state = state;
  }

  /**
   * Runs task on session s after delayMs if s is then still live and passes stillDue.
   *
   * @return cancels the task if it has not run yet
   */
  TaskRunner.Cancellable after(long delayMs, ServiceSession s, Predicate<ServiceSession> stillDue,
      Consumer<ServiceSession> task) {
    long sessionId = s.id;
    return runner.postDelayed(() -> runIfLive(sessionId, stillDue, task), delayMs);
  }

  /**
   * Runs task now on session sessionId if it is still live and passes stillDue: for work that
   * comes back later by another path (a flush's answer).
   */
  void runIfLive(long sessionId, Predicate<ServiceSession> stillDue, Consumer<ServiceSession> task) {
    ServiceSession live = state.liveSession(sessionId);
    if (live != null && stillDue.test(live)) {
      task.accept(live);
    }
  }

  /** Cancels c if there is one. */
  static void cancel(TaskRunner.Cancellable c) {
    if (c != null) {
      c.cancel();
    }
  }

  /** The check of a task due while the session is in state. */
  static Predicate<ServiceSession> in(ServiceSession.State state) {
    return s -> s.state == state;
  }

  /** The check of a task due whatever the session's state. */
  static Predicate<ServiceSession> always() {
    return s -> true;
  }
}
