package org.jperfetto.ipc;

/**
 * Serves calls of one method straight from the request bytes, on the loop thread, before anything
 * is decoded into protobuf objects: the path for requests that come by the thousand (CommitData).
 * It may decline a call (return false), which then goes to the method's {@link MethodHandler} as
 * usual, so it only has to handle the common shapes.
 */
@FunctionalInterface
public interface RawMethodHandler {
  /**
   * Serves call, or declines it. A handler that serves a call must answer it before returning
   * ({@link RawCall#replyEmpty()} or {@link RawCall#fail()}), and must not keep the call or its
   * bytes: both are reused for the next request.
   *
   * @return true if served; false to have it decoded and handed to the regular handler
   */
  boolean handle(RawCall call);
}
