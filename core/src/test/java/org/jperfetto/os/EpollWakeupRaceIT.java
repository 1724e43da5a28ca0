package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Wakeups racing with close never fail and never touch a descriptor after it is released. */
@Timeout(30)
class EpollWakeupRaceIT {

  @Test
  void wakeupDuringCloseIsHarmless() throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (int round = 0; round < 200; round++) {
      Epoll ep = Epoll.create();
      AtomicBoolean stop = new AtomicBoolean();
      Thread waker = Thread.ofPlatform().start(() -> {
        try {
          while (!stop.get()) {
            ep.wakeup();
          }
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      ep.await(0);
      ep.close();
      stop.set(true);
      waker.join();
    }
    assertEquals(null, failure.get());
  }
}
