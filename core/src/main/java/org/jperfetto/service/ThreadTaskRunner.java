package org.jperfetto.service;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The default {@link TaskRunner}: one daemon thread running tasks in the order they were posted.
 * An exception thrown by a task is logged and does not stop the thread.
 */
public final class ThreadTaskRunner implements TaskRunner, AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ThreadTaskRunner.class.getName());

  private final ScheduledThreadPoolExecutor executor;
  private volatile Thread thread;

  /** A runner whose one daemon thread, made on the first task, is named threadName. */
  public ThreadTaskRunner(String threadName) {
    executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      thread = t;
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
    executor.prestartCoreThread();
  }

  @Override
  public void post(Runnable task) {
    executor.execute(guarded(task));
  }

  @Override
  public Cancellable postDelayed(Runnable task, long delayMs) {
    ScheduledFuture<?> f = executor.schedule(guarded(task), Math.max(0, delayMs), TimeUnit.MILLISECONDS);
    return () -> f.cancel(false);
  }

  @Override
  public boolean isOnRunnerThread() {
    return Thread.currentThread() == thread;
  }

  /** Stops the thread after the tasks already posted (delayed ones are dropped). */
  @Override
  public void close() {
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    executor.shutdown();
  }

  private static Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        LOG.log(System.Logger.Level.ERROR, "task on the tracing service thread failed", e);
      }
    };
  }
}
