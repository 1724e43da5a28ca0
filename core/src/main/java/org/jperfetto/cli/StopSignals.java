package org.jperfetto.cli;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Turns SIGINT (Ctrl-C) and SIGTERM into a request to stop the session cleanly, as upstream's
 * perfetto does: the first signal completes {@link #requested()}, so the command flushes, stops
 * the session, reads it back and writes a valid trace, and exits 0. A second signal exits at once
 * with status 1, the trace incomplete.
 *
 * <p>Why {@code sun.misc.Signal} (module jdk.unsupported) and not a shutdown hook: with a hook the
 * JVM is already exiting, with status 143 for SIGTERM, and the stop must then race the shutdown;
 * a handler keeps the process in charge of its exit code and its own end, as upstream's is. The
 * class is reached by name through method handles: javac's warning for a jdk.unsupported type
 * cannot be silenced otherwise, and the build treats warnings as errors.
 */
final class StopSignals implements AutoCloseable {
  private static final String SIGNAL = "sun.misc.Signal";
  private static final String HANDLER = "sun.misc.SignalHandler";

  private final CompletableFuture<String> requested = new CompletableFuture<>();
  /** The handlers replaced, for {@link #close()}. */
  private final List<Replaced> previous = new ArrayList<>();

  /** A sun.misc.Signal and the SignalHandler it had before ours. */
  private record Replaced(Object signal, Object handler) {}

  private StopSignals() {}

  /** Installs the handlers (where the JVM lets us; e.g. -Xrs keeps the defaults). */
  static StopSignals install(java.io.PrintStream err) {
    StopSignals s = new StopSignals();
    for (String name : new String[] {"INT", "TERM"}) {
      try {
        Object signal = Api.NEW_SIGNAL.invoke(name);
        Object handler = Api.handler(() -> s.onSignal("SIG" + name, err));
        s.previous.add(new Replaced(signal, Api.HANDLE.invoke(signal, handler)));
      } catch (IllegalArgumentException e) {
        err.println("jperfetto: cannot handle SIG" + name + " (" + e.getMessage() + ")");
      } catch (Throwable e) {
        throw new IllegalStateException("sun.misc.Signal unusable in this JVM", e);
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
    for (Replaced r : previous) {
      try {
        Api.HANDLE.invoke(r.signal(), r.handler());
      } catch (Throwable e) {
        throw new IllegalStateException("restoring the handler of " + r.signal(), e);
      }
    }
  }

  /** Completes with the signal's name at the first signal. */
  CompletableFuture<String> requested() {
    return requested;
  }

  /** sun.misc.Signal's constructor and handle(Signal, SignalHandler), and handlers made from a Runnable. */
  private static final class Api {
    static final Class<?> SIGNAL_CLASS = load(SIGNAL);
    static final Class<?> HANDLER_CLASS = load(HANDLER);
    static final MethodHandle NEW_SIGNAL;
    static final MethodHandle HANDLE;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        NEW_SIGNAL = lookup.findConstructor(SIGNAL_CLASS, MethodType.methodType(void.class, String.class));
        HANDLE = lookup.findStatic(SIGNAL_CLASS, "handle",
            MethodType.methodType(HANDLER_CLASS, SIGNAL_CLASS, HANDLER_CLASS));
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private Api() {}

    private static Class<?> load(String name) {
      try {
        return Class.forName(name);
      } catch (ClassNotFoundException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** A SignalHandler whose handle(Signal) runs action; its Object methods behave as an identity's. */
    static Object handler(Runnable action) {
      return Proxy.newProxyInstance(StopSignals.class.getClassLoader(), new Class<?>[] {HANDLER_CLASS},
          (proxy, method, args) -> switch (method.getName()) {
            case "handle" -> {
              action.run();
              yield null;
            }
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> "StopSignals handler";
          });
    }
  }
}
