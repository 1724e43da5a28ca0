package org.jperfetto.ipc;

/**
 * Serves one method of an exposed service. Runs on the host's event-loop thread (services are
 * single-threaded, as upstream's are): it must not block. It may answer at once or later, from any
 * thread, through the {@link MethodCall}.
 */
@FunctionalInterface
public interface MethodHandler {
  void handle(MethodCall call) throws Exception;
}
