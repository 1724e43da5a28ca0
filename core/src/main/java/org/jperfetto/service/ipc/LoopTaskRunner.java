package org.jperfetto.service.ipc;

import org.jperfetto.ipc.EventLoop;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.service.TaskRunner;

/**
 * The service's thread is the IPC loop's thread: jtraced runs its sockets and its service logic on
 * one thread, as upstream's traced does, so a CommitData is decoded, its chunks copied and freed and
 * its reply queued in the turn of the loop that read it, with no hand-over to another thread and no
 * wake-up in between.
 */
final class LoopTaskRunner implements TaskRunner, AutoCloseable {
  private final EventLoop loop;

  LoopTaskRunner(String threadName) throws ErrnoException {
    this.loop = new EventLoop(threadName);
  }

  EventLoop loop() {
    return loop;
  }

  @Override
  public void post(Runnable task) {
    loop.execute(task);
  }

  @Override
  public Cancellable postDelayed(Runnable task, long delayMs) {
    return loop.schedule(task, delayMs)::cancel;
  }

  @Override
  public boolean isOnRunnerThread() {
    return loop.inLoop();
  }

  /** Runs what is already posted, then stops the thread (delayed tasks not yet due are dropped). */
  @Override
  public void close() {
    loop.close();
  }
}
