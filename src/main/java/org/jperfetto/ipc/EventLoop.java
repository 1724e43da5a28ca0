package org.jperfetto.ipc;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jperfetto.os.Epoll;
import org.jperfetto.os.ErrnoException;

/**
 * One thread running an epoll loop: file descriptors with a readiness handler, plus tasks posted
 * from other threads. Handlers and tasks run on the loop thread, one at a time, so the state they
 * touch needs no locks. Tokens are slot indices, so dispatching a ready event allocates nothing.
 */
final class EventLoop implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(EventLoop.class.getName());

  /** Called on the loop thread with the ready events (Epoll.IN, OUT, ERR, HUP, RDHUP) of one fd. */
  interface Handler {
    void onEvents(int events);
  }

  private final Epoll epoll;
  private final Thread thread;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final List<Handler> slots = new ArrayList<>();
  private final ArrayList<Integer> freeSlots = new ArrayList<>();
  private volatile boolean running = true;

  EventLoop(String threadName) throws ErrnoException {
    epoll = Epoll.create();
    thread = Thread.ofPlatform().name(threadName).daemon(true).unstarted(this::run);
    thread.start();
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop thread, soon. Callable from any thread, including the loop. */
  void execute(Runnable task) {
    tasks.add(task);
    if (!inLoop()) {
      try {
        epoll.wakeup();
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "waking the IPC loop failed", e);
      }
    }
  }

  /** Watches {@code fd}; loop thread only. Returns the token to modify or remove it with. */
  long register(int fd, int events, Handler handler) throws ErrnoException {
    assert inLoop();
    int slot;
    if (freeSlots.isEmpty()) {
      slot = slots.size();
      slots.add(handler);
    } else {
      slot = freeSlots.removeLast();
      slots.set(slot, handler);
    }
    try {
      epoll.add(fd, events, slot);
    } catch (ErrnoException e) {
      release(slot);
      throw e;
    }
    return slot;
  }

  void modify(int fd, int events, long token) throws ErrnoException {
    epoll.modify(fd, events, token);
  }

  /** Stops watching {@code fd} (call before closing it). */
  void unregister(int fd, long token) {
    try {
      epoll.remove(fd);
    } catch (ErrnoException e) {
      LOG.log(Level.DEBUG, "epoll remove of fd " + fd + ": " + e.getMessage());
    }
    release((int) token);
  }

  private void release(int slot) {
    slots.set(slot, null);
    freeSlots.add(slot);
  }

  private void run() {
    while (running) {
      try {
        int n = epoll.await(tasks.isEmpty() ? -1 : 0);
        for (int i = 0; i < n && running; i++) {
          long token = epoll.token(i);
          Handler handler = token >= 0 && token < slots.size() ? slots.get((int) token) : null;
          if (handler != null) {
            dispatch(handler, epoll.events(i));
          }
        }
      } catch (ErrnoException e) {
        LOG.log(Level.ERROR, "IPC event loop: epoll_wait failed, stopping", e);
        running = false;
      }
      runTasks();
    }
    runTasks();
    epoll.close();
  }

  private static void dispatch(Handler handler, int events) {
    try {
      handler.onEvents(events);
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "IPC event handler failed", e);
    }
  }

  private void runTasks() {
    for (Runnable task; (task = tasks.poll()) != null; ) {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.log(Level.ERROR, "IPC loop task failed", e);
      }
    }
  }

  /** Stops the loop after running what is queued and waits for the thread (unless called on it). */
  @Override
  public void close() {
    if (!running && !thread.isAlive()) {
      return;
    }
    execute(() -> running = false);
    if (!inLoop()) {
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
