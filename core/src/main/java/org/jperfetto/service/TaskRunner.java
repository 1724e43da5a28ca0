package org.jperfetto.service;

/**
 * The thread the {@link TracingService} lives on. Every entry point of the service, its endpoints
 * and its callbacks runs on this one thread, so the service needs no locks; socket adapters and
 * in-process users {@link #post} into it.
 */
public interface TaskRunner {
  /** Runs task on the runner thread, after the tasks posted before it. */
  void post(Runnable task);

  /** Runs task on the runner thread after delayMs; the returned handle cancels it if not yet run. */
  Cancellable postDelayed(Runnable task, long delayMs);

  /** True when called from the runner thread. */
  boolean isOnRunnerThread();

  /**
   * Runs task at once when called on the runner thread, else posts it. For a socket adapter whose
   * requests arrive on the runner thread (jtraced's sockets and service share one thread): each
   * request is served in the turn that read it, in arrival order.
   */
  default void runOrPost(Runnable task) {
    if (isOnRunnerThread()) {
      task.run();
    } else {
      post(task);
    }
  }

  /** A delayed task that may be cancelled. */
  @FunctionalInterface
  interface Cancellable {
    /** Stops the task from running if it has not started; idempotent. */
    void cancel();
  }
}
