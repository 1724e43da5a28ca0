package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ThreadsTest {
  @Test
  void lowestNiceHoldsForTheThreadAndWhatItStartsNotForOthers() throws Exception {
    int callerNice = nice(Threads.currentTid());
    AtomicReference<Boolean> set = new AtomicReference<>();
    AtomicInteger own = new AtomicInteger(-100);
    AtomicInteger child = new AtomicInteger(-100);
    Thread t = Thread.ofPlatform().start(() -> {
      set.set(Threads.setCurrentNice(Threads.LOWEST_NICE));
      own.set(nice(Threads.currentTid()));
      Thread c = Thread.ofPlatform().start(() -> child.set(nice(Threads.currentTid())));
      join(c);
    });
    t.join();
    assertTrue(set.get(), "lowering the priority needs no privilege");
    assertEquals(Threads.LOWEST_NICE, own.get());
    assertEquals(Threads.LOWEST_NICE, child.get(), "a thread started afterwards inherits it");
    assertEquals(callerNice, nice(Threads.currentTid()), "the calling thread's own is untouched");
  }

  /** Field 19 of /proc/self/task/TID/stat (after the parenthesised name, which may hold spaces). */
  private static int nice(int tid) {
    try {
      String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
      String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Integer.parseInt(after[19 - 3]);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void join(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
