package org.jperfetto.cli;

import java.util.concurrent.CompletableFuture;
import sun.misc.Signal;

/**
 * Turns SIGINT (Ctrl-C) and SIGTERM into a request to stop the session cleanly, as upstream's
 * perfetto does: the first signal completes {@link #requested()}, so the command flushes, stops
 * the session, reads it back and writes a valid trace, and exits 0. A second signal exits at once
 * with status 1, the trace incomplete.
 *
 * <p>Why {@code sun.misc.Signal} (module jdk.unsupported) and not a shutdown hook: with a hook the
 * JVM is already exiting, with status 143 for SIGTERM, and the stop must then race the shutdown;
 * a handler keeps the process in charge of its exit code and its own end, as upstream's is.
 */
final class StopSignals implements AutoCloseable {
  private final CompletableFuture<String> requested = new CompletableFuture<>();
  private final java.util.Map<Signal, sun.misc.SignalHandler> previous = new java.util.HashMap<>();

  private StopSignals() {}

  /** Installs the handlers (where the JVM lets us; e.g. -Xrs keeps the defaults). */
  static StopSignals install(java.io.PrintStream err) {
    StopSignals s = new StopSignals();
    for (String name : new String[] {"INT", "TERM"}) {
      try {
        Signal signal = new Signal(name);
        s.previous.put(signal, Signal.handle(signal, sig -> s.onSignal("SIG" + name, err)));
      } catch (IllegalArgumentException e) {
        err.println("jperfetto: cannot handle SIG" + name + " (" + e.getMessage() + ")");
      }
    }
    return s;
  }

  private void onSignal(String name, java.io.PrintStream err) {
    if (!requested.complete(name)) {
      err.println("\n" + name + " received again: exiting without finishing the trace");
      Runtime.getRuntime().halt(1);
    }
  }

  /** Puts back the handlers that were there before (the command may run inside a bigger program). */
  @Override
  public void close() {
    previous.forEach(Signal::handle);
  }

  /** Completes with the signal's name at the first signal. */
  CompletableFuture<String> requested() {
    return requested;
  }
}
