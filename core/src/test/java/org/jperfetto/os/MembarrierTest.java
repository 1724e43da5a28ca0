package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** membarrier(2) PRIVATE_EXPEDITED, and the store-buffering litmus test it makes pass. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MembarrierTest {
  @Test
  void availabilityFollowsWhatTheKernelSupports() throws Exception {
    long supported = Membarrier.query();
    boolean kernelHasIt = supported >= 0
        && (supported & Membarrier.CMD_PRIVATE_EXPEDITED) != 0
        && (supported & Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED) != 0;
    assertEquals(kernelHasIt, Membarrier.isAvailable(), "query=" + Long.toHexString(supported));
    if (kernelHasIt) {
      assertDoesNotThrow(Membarrier::run);
    }
  }

  // Store buffering: a stores x then loads y, b stores y, runs the membarrier, loads x. Without a
  // StoreLoad barrier on both sides, x86 lets both loads miss both stores; with the membarrier on
  // b's side and only program order (opaque accesses) on a's, at least one load must see a store.
  private static final VarHandle X;
  private static final VarHandle Y;
  private static final VarHandle ROUND;
  private static final VarHandle A_DONE;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      X = l.findVarHandle(MembarrierTest.class, "x", int.class);
      Y = l.findVarHandle(MembarrierTest.class, "y", int.class);
      ROUND = l.findVarHandle(MembarrierTest.class, "round", int.class);
      A_DONE = l.findVarHandle(MembarrierTest.class, "aDone", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private int x;
  private int y;
  private int round;
  private int aDone;
  private int aSawY;

  @Test
  void storeBufferingNeverLosesBothStores() throws Exception {
    assumeTrue(Membarrier.isAvailable(), "needs membarrier PRIVATE_EXPEDITED");
    int rounds = 5_000;
    Thread a = Thread.ofPlatform().name("litmus-a").start(() -> {
      for (int r = 1; r <= rounds; r++) {
        while ((int) ROUND.getAcquire(this) != r) {
          Thread.onSpinWait();
        }
        X.setOpaque(this, r);
        aSawY = (int) Y.getOpaque(this);
        A_DONE.setRelease(this, r);
      }
    });
    int bothMissed = 0;
    for (int r = 1; r <= rounds; r++) {
      ROUND.setRelease(this, r);
      Y.setOpaque(this, r);
      Membarrier.run();
      int bSawX = (int) X.getOpaque(this);
      while ((int) A_DONE.getAcquire(this) != r) {
        Thread.onSpinWait();
      }
      if (bSawX != r && aSawY != r) {
        bothMissed++;
      }
    }
    a.join();
    assertEquals(0, bothMissed, "rounds where neither thread saw the other's store");
    assertTrue((int) X.getOpaque(this) == rounds);
  }
}
