package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.jperfetto.producer.track.Category;
import org.junit.jupiter.api.Test;

/** The success path runs in every ref-producer and AOT training test; here, the waits that end without a session. */
class SessionStartTest {
  @Test
  void noSessionMeansFalseAfterTheTimeout() throws Exception {
    SessionStart start = new SessionStart(Category.of("never_enabled"));
    assertFalse(start.await(5));
    start.run(); // a sessions-changed call with the category still off does not end the wait
    assertFalse(start.await(5));
  }
}
