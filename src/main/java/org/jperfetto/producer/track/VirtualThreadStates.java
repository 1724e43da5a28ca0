package org.jperfetto.producer.track;

import org.jperfetto.producer.DataSource;

/**
 * The {@link ThreadState}s virtual threads share: a virtual thread holds one only for the event it
 * emits, so a handful serve any number of virtual threads, each with its writers and sequences
 * (one writer and chunk per virtual thread would run out of both after a thousand of them).
 *
 * <p>As many states as carriers to begin with (a virtual thread holds one only while mounted and
 * emitting, unless it blocks inside the event), more when all are held, up to {@link #MAX_STATES};
 * beyond that a virtual thread that finds all held yields (holding nothing) and tries again. A
 * thread starts looking at the state its id points to, so that threads spread over the states.
 */
final class VirtualThreadStates {
  /**
   * The most states: as many as a data source's writer sets for virtual threads (four per core, at
   * most 256). Each holds a chunk per session, so more states than
   * the SMB has chunks to spare had the million-virtual-thread stress run drop most events (it had
   * grown to 256 while holders waited, unmounted, for the arbiter's monitor); past the limit a
   * virtual thread yields, which lets those holders run.
   */
  static final int MAX_STATES = DataSource.MAX_VIRTUAL_THREAD_WRITERS;

  private final TrackEvent owner;
  private final DataSource<Session> dataSource;
  private volatile ThreadState[] states;

  VirtualThreadStates(TrackEvent owner, DataSource<Session> dataSource) {
    this.owner = owner;
    this.dataSource = dataSource;
    this.states = new ThreadState[0];
  }

  /** A state held for one event of virtual thread current; release it at the event's end. */
  ThreadState claim(Thread current) {
    for (;;) {
      ThreadState[] s = states;
      int n = s.length;
      int start = n == 0 ? 0 : (int) Long.remainderUnsigned(current.threadId(), n);
      for (int i = 0; i < n; i++) {
        ThreadState st = s[(start + i) % n];
        if (st.tryClaim(current)) {
          return st;
        }
      }
      if (!grow(s)) {
        Thread.yield(); // all held: let the holders run (a virtual thread unmounts here, holding nothing)
      }
    }
  }

  /** Adds states if seen is still the current set and not at the limit; whether it did. */
  private synchronized boolean grow(ThreadState[] seen) {
    if (states != seen) {
      return true; // another thread grew it: look again
    }
    int n = seen.length;
    if (n >= MAX_STATES) {
      return false;
    }
    int size = n == 0 ? Math.max(2, Runtime.getRuntime().availableProcessors()) : Math.min(MAX_STATES, 2 * n);
    ThreadState[] grown = java.util.Arrays.copyOf(seen, size);
    for (int i = n; i < size; i++) {
      grown[i] = ThreadState.unbound(owner, dataSource);
    }
    states = grown;
    return true;
  }

  /** Hands every state's partly filled chunks to the service (waits for each state's holder). */
  void flush(DataSource.TraceFunction<Session> flush) {
    for (ThreadState st : states) {
      st.claimForFlush();
      try {
        st.flushWriters(flush);
      } finally {
        st.release();
      }
    }
  }

  /** States made so far (for tests). */
  int size() {
    return states.length;
  }
}
