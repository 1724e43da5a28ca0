package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.DataSourceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** DataSource.trace with writers held by the caller (one ThreadLocal lookup per event for TrackEvent). */
@Timeout(10)
class DataSourceTest {
  private final Arena arena = Arena.ofShared();
  private final SharedMemoryArbiter arbiter = new SharedMemoryArbiter(
      new SharedMemoryAbi(arena.allocate(64 * 1024, 4096), 4096), () -> {});
  private final DataSource<Void> source = DataSource.named("test.source");

  @AfterEach
  void closeArena() {
    arena.close();
  }

  private void start(int index, long instanceId) {
    DataSourceInstance<Void> instance = new DataSourceInstance<>(instanceId, index,
        DataSourceConfig.newBuilder().setName("test.source").build());
    source.setUp(instance, arbiter, 0);
    source.activate(index);
  }

  @Test
  void heldWritersAreTheThreadsOwn() {
    start(0, 1);
    DataSource.ThreadWriters<Void> writers = source.threadWriters();
    assertSame(writers, source.threadWriters());
    List<TraceContext<Void>> seen = new ArrayList<>();
    source.trace(writers, seen::add);
    source.trace(seen::add);
    assertEquals(2, seen.size());
    assertSame(seen.get(0), seen.get(1), "both trace methods write through one writer per thread");
  }

  @Test
  void heldWritersFollowInstancesComingAndGoing() {
    DataSource.ThreadWriters<Void> writers = source.threadWriters();
    List<TraceContext<Void>> seen = new ArrayList<>();
    source.trace(writers, seen::add);
    assertTrue(seen.isEmpty(), "nothing is active");
    start(0, 1);
    start(1, 2);
    source.trace(writers, seen::add);
    assertEquals(2, seen.size(), "one call per active instance");
    assertEquals(1, seen.get(0).instance().instanceId());
    assertEquals(2, seen.get(1).instance().instanceId());
    TraceWriter first = seen.get(0).writer();
    source.release(0);
    start(0, 3);
    seen.clear();
    source.trace(writers, seen::add);
    assertEquals(3, seen.get(0).instance().instanceId());
    assertNotSame(first, seen.get(0).writer(), "a new instance in the slot gets a new writer");
    assertThrows(IllegalStateException.class, () -> first.newTracePacket(), "the old one is closed");
  }

  @Test
  void theSoleContextIsTheOnlyActiveInstancesAndTheVersionMovesWithEveryChange() {
    DataSource.ThreadWriters<Void> writers = source.threadWriters();
    List<Long> versions = new ArrayList<>(List.of(source.instancesVersion()));
    assertEquals(null, source.soleContext(writers), "nothing active");
    DataSourceInstance<Void> first = new DataSourceInstance<>(1, 0,
        DataSourceConfig.newBuilder().setName("test.source").build());
    source.setUp(first, arbiter, 0);
    versions.add(source.instancesVersion());
    source.activate(0);
    versions.add(source.instancesVersion());
    assertEquals(null, source.soleContext(writers), "no writer on this thread before its first trace");
    List<TraceContext<Void>> seen = new ArrayList<>();
    source.trace(writers, seen::add);
    assertSame(seen.get(0), source.soleContext(writers), "the context the trace went through");
    assertEquals(versions.get(2), source.instancesVersion(), "a thread's first trace changes no instance");
    start(1, 2);
    versions.add(source.instancesVersion());
    source.trace(writers, seen::add);
    assertEquals(null, source.soleContext(writers), "two active");
    source.deactivate(0);
    versions.add(source.instancesVersion());
    assertEquals(2, source.soleContext(writers).instance().instanceId(), "the one left active");
    source.incrementalStateCleared();
    versions.add(source.instancesVersion());
    source.release(1);
    versions.add(source.instancesVersion());
    assertEquals(null, source.soleContext(writers));
    assertEquals(versions.size(), versions.stream().distinct().count(), "every change moved it: " + versions);
    Throwable t = CompletableFuture.supplyAsync(() -> {
      try {
        source.soleContext(writers);
        return null;
      } catch (IllegalArgumentException e) {
        return e;
      }
    }).join();
    assertTrue(t instanceof IllegalArgumentException, "another thread's writers are refused");
  }

  @Test
  void writersOfAnotherThreadOrSourceAreRefused() throws Exception {
    start(0, 1);
    DataSource.ThreadWriters<Void> mine = source.threadWriters();
    Throwable t = CompletableFuture.supplyAsync(() -> {
      try {
        source.trace(mine, ctx -> {});
        return null;
      } catch (IllegalArgumentException e) {
        return e;
      }
    }).get(5, TimeUnit.SECONDS);
    assertTrue(t instanceof IllegalArgumentException, "another thread's writers: " + t);
    DataSource<Void> other = DataSource.named("other.source");
    DataSourceInstance<Void> instance = new DataSourceInstance<>(9, 0,
        DataSourceConfig.newBuilder().setName("other.source").build());
    other.setUp(instance, arbiter, 0);
    other.activate(0);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> other.trace(mine, ctx -> {}));
    assertTrue(e.getMessage().contains("test.source") && e.getMessage().contains("other.source"), e.getMessage());
  }
}
