package org.jperfetto.ipc;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import org.jperfetto.os.Epoll;
import org.jperfetto.os.ErrnoException;

/**
 * One thread running an epoll loop: file descriptors with a readiness handler, plus tasks posted
 * from other threads, now or after a delay. Handlers and tasks run on the loop thread, one at a
 * time, so the state they touch needs no locks. Tokens are slot indices, so dispatching a ready
 * event allocates nothing.
 *
 * <p>Several {@link IpcHost}s may share one loop, and the tracing service may run its own tasks on
 * it (as upstream's traced runs its IPC and its service logic on one thread): a request is then
 * handled in the same turn that read it, with no hand-over between threads.
 */
public final class EventLoop implements AutoCloseable {
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
  /** Delayed tasks by deadline; loop thread only. */
  private final PriorityQueue<Timer> timers = new PriorityQueue<>();
  private long timerSequence;
  private volatile boolean running = true;

  /** A task to run at a deadline; {@link #cancel()} from any thread keeps it from running. */
  public static final class Timer implements Comparable<Timer> {
    private final Runnable task;
    private final long deadlineNanos;
    private long sequence;
    private volatile boolean cancelled;

    private Timer(Runnable task, long deadlineNanos) {
      this.task = task;
      this.deadlineNanos = deadlineNanos;
    }

    /** Keeps the task from running if it has not started; idempotent. */
    public void cancel() {
      cancelled = true;
    }

    @Override
    public int compareTo(Timer o) {
      int c = Long.compare(deadlineNanos - o.deadlineNanos, 0);
      return c != 0 ? c : Long.compare(sequence, o.sequence);
    }
  }

  /** Starts the loop's thread (a daemon). */
  public EventLoop(String threadName) throws ErrnoException {
    epoll = Epoll.create();
    thread = Thread.ofPlatform().name(threadName).daemon(true).unstarted(this::run);
    thread.start();
  }

  /** True on the loop's thread. */
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop thread, soon. Callable from any thread, including the loop. */
  public void execute(Runnable task) {
    tasks.add(task);
    if (!inLoop()) {
      try {
        epoll.wakeup();
      } catch (ErrnoException e) {
        LOG.log(Level.WARNING, "waking the IPC loop failed", e);
      }
    }
  }

  /** Loop-thread work that may fail with an errno (registering an fd, say). */
  @FunctionalInterface
  public interface LoopTask {
    void run() throws ErrnoException;
  }

  /**
   * Runs {@code task} on the loop thread and waits until it has run (at once when called on the
   * loop): for the owner of a socket registering it before anything else may use it.
   *
   * @throws ErrnoException what the task threw
   * @throws InterruptedException if the caller was interrupted while waiting
   */
  public void runAndWait(LoopTask task) throws ErrnoException, InterruptedException {
    if (inLoop()) {
      task.run();
      return;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    execute(() -> {
      try {
        task.run();
        done.complete(null);
      } catch (ErrnoException | RuntimeException e) {
        done.completeExceptionally(e);
      }
    });
    try {
      done.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ErrnoException errno) {
        throw errno;
      }
      throw (RuntimeException) e.getCause();
    }
  }

  /**
   * Runs {@code task} on the loop thread once {@code delayMs} have passed (tasks with the same
   * deadline in the order given). Callable from any thread.
   */
  public Timer schedule(Runnable task, long delayMs) {
    Timer timer = new Timer(task, System.nanoTime() + Math.max(0, delayMs) * 1_000_000L);
    if (inLoop()) {
      addTimer(timer);
    } else {
      execute(() -> addTimer(timer));
    }
    return timer;
  }

  private void addTimer(Timer timer) {
    timer.sequence = timerSequence++;
    timers.add(timer);
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
      turn();
    }
    runTasks();
    epoll.close();
  }

  /**
   * One wake-up: the ready fds' handlers, then queued tasks and due timers. A method of its own, not
   * the body of run()'s loop, so that the JIT compiles it by how often it is called, as any other
   * method: a loop thread that entered run() before jtraced's warm-up (the real service's) then runs
   * the compiled turn from its next wake-up on. As a loop body it ran whatever on-stack-replacement
   * code existed, which needs tens of thousands of wake-ups to reach C2 and got there during a
   * later burst.
   */
  private void turn() {
    try {
      int n = epoll.await(tasks.isEmpty() ? timeoutMs() : 0);
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
    runDueTimers();
  }

  /** epoll_wait's timeout: until the next timer (rounded up), or forever without one. */
  private int timeoutMs() {
    Timer next = timers.peek();
    if (next == null) {
      return -1;
    }
    long nanos = next.deadlineNanos - System.nanoTime();
    return nanos <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000);
  }

  private void runDueTimers() {
    long now = System.nanoTime();
    for (Timer t; (t = timers.peek()) != null && t.deadlineNanos - now <= 0 && running; ) {
      timers.poll();
      if (!t.cancelled) {
        run(t.task);
      }
    }
  }

  private static void dispatch(Handler handler, int events) {
    try {
      handler.onEvents(events);
    } catch (RuntimeException | Error e) { // e.g. a class that cannot load while out of fds
      LOG.log(Level.ERROR, "IPC event handler failed", e);
    }
  }

  private void runTasks() {
    for (Runnable task; (task = tasks.poll()) != null; ) {
      run(task);
    }
  }

  private static void run(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException | Error e) { // the loop (and the service on it) goes on
      LOG.log(Level.ERROR, "IPC loop task failed", e);
    }
  }

  /**
   * Stops the loop after running what is queued (delayed tasks not yet due are dropped) and waits
   * for the thread (unless called on it).
   */
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
