package org.jperfetto.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.AnyContextObservationHandlerCompatibilityKit;
import java.util.List;
import org.jperfetto.tracing.InProcessSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Micrometer's own compatibility kit for a handler of any context, run while a session records: the
 * callbacks in any order, on contexts with nothing set (no name, no parent, no start). Afterwards
 * the trace must decode cleanly: what the kit's contexts carried made no malformed packet.
 */
class HandlerCompatibilityKitTest extends AnyContextObservationHandlerCompatibilityKit {
  static ObservationTracing tracing;
  static InProcessSession session;

  @BeforeAll
  static void startSession() throws Exception {
    tracing = new ObservationTracing();
    session = tracing.session();
  }

  @AfterAll
  static void stopSession() throws Exception {
    try {
      assertTrue(tracing.handler.category().isEnabled(), "the kit ran while the session recorded");
      RecordedTrace trace = ObservationTracing.stop(session);
      assertEquals(List.of(), trace.errors);
      assertTrue(trace.events.stream().allMatch(e -> e.name() == null || !e.name().isEmpty()));
    } finally {
      tracing.close();
    }
  }

  @Override
  public ObservationHandler<Observation.Context> handler() {
    return tracing.handler;
  }
}
