package org.jperfetto.consumer;

import java.util.Objects;

/**
 * How a tracing session ended, as the service reported it in the EnableTracing reply.
 *
 * @param error empty when the session ended normally; otherwise the service's error (or a note
 *     that the connection to the service was lost)
 */
public record TracingDisabled(String error) {
  /** Checks that error is not null (empty for a normal end). */
  public TracingDisabled {
    Objects.requireNonNull(error, "error");
  }

  /** True when the session ended without an error. */
  public boolean ok() {
    return error.isEmpty();
  }
}
