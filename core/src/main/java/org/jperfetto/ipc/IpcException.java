package org.jperfetto.ipc;

import java.io.IOException;

/** Why an IPC call or bind did not succeed. */
public final class IpcException extends IOException {
  /** What went wrong. */
  public enum Kind {
    /** The bound service has no method of that name (an older service: the newer caller adapts). */
    METHOD_NOT_FOUND,
    /** The host exposes no service of that name. */
    SERVICE_NOT_FOUND,
    /** The host answered success=false. */
    REQUEST_FAILED,
    /** The host answered with a RequestError. */
    REQUEST_ERROR,
    /** The connection was lost or closed before the answer came. */
    CONNECTION_LOST,
    /** The request could not be queued (too large, or the send buffer is full). */
    SEND_FAILED
  }

  private final Kind kind;

  public IpcException(Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  public IpcException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }
}
