package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JfrClockTest {
  static final long EPOCH = 1_700_000_000_000_000_000L;

  @Test
  void firstMarkGivesTheOffsetWithinItsBracket() {
    JfrClock c = new JfrClock();
    assertFalse(c.isCalibrated());
    assertThrows(IllegalStateException.class, () -> c.toTrace(EPOCH));
    // JFR time EPOCH + 1000 read between monotonic 500 and 540: offset in [EPOCH+460, EPOCH+500].
    c.mark(EPOCH + 1000, 500, 540);
    assertTrue(c.isCalibrated());
    assertEquals(EPOCH + 480, c.offset());
    assertEquals(20, c.uncertaintyNanos());
    assertEquals(520, c.toTrace(EPOCH + 1000));
  }

  @Test
  void aTighterMarkReplacesAWiderOneAndDurationsArePreserved() {
    JfrClock c = new JfrClock();
    c.mark(EPOCH + 1000, 500, 600);
    c.mark(EPOCH + 2_000_000, 1_999_470, 1_999_480);
    assertEquals(EPOCH + 525, c.offset());
    assertEquals(5, c.uncertaintyNanos());
    assertEquals(0, c.steps());
    assertEquals(12_345, c.toTrace(EPOCH + 99_000 + 12_345) - c.toTrace(EPOCH + 99_000));
  }

  @Test
  void aMarkOutsideTheBracketIsAStep() {
    JfrClock c = new JfrClock();
    c.mark(EPOCH + 1000, 500, 520);
    c.mark(EPOCH + 1_000_000 + 50_000, 1_000_000, 1_000_020); // JFR time jumped 50 us
    assertEquals(1, c.steps());
    assertTrue(c.largestStepNanos() >= 49_000 && c.largestStepNanos() <= 51_000, "step " + c.largestStepNanos());
    assertEquals(1_000_010, c.toTrace(EPOCH + 1_050_000), "the new anchor is used");
    assertEquals(2, c.marks());
  }

  @Test
  void backwardsBracketIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new JfrClock().mark(EPOCH, 10, 5));
  }
}
