package org.jperfetto.ipc;

/** Told once when an {@link IpcClient}'s connection ends, whatever the cause. */
@FunctionalInterface
public interface ConnectionListener {
  /**
   * The connection is gone; every pending call has already failed with
   * {@link IpcException.Kind#CONNECTION_LOST}. Runs on the client's I/O thread, or on the thread
   * that called {@link IpcClient#close()}.
   *
   * @param cause what ended it
   */
  void onDisconnected(IpcException cause);
}
