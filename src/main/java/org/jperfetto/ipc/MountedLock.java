package org.jperfetto.ipc;

import java.util.concurrent.locks.ReentrantLock;

/**
 * A lock that a virtual thread takes without unmounting: it spins (onSpinWait) until the lock is
 * free, where a monitor or a parking lock would unmount it on contention (JDK 24 and later unmount
 * on monitor waits too). A virtual thread that takes the arbiter's lock may be in the middle of a
 * packet on a writer that virtual threads share (TrackEvent's); unmounted there, it keeps that
 * writer from every other virtual thread until it is scheduled again, which a busy scheduler may
 * put off for long. The producer's arbiter, its drain and the IPC client's sends use it, the path
 * of a writer that completes a chunk. Platform threads park as with any lock. Hold it only for
 * short sections that do not block, so that a spinner waits microseconds.
 */
public final class MountedLock {
  private final ReentrantLock lock = new ReentrantLock();

  /** Takes the lock: a virtual thread spins, a platform thread parks. Reentrant. */
  public void lock() {
    if (!Thread.currentThread().isVirtual()) {
      lock.lock();
      return;
    }
    while (!lock.tryLock()) {
      Thread.onSpinWait();
    }
  }

  public void unlock() {
    lock.unlock();
  }
}
