package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TrackEventCategory;
import org.junit.jupiter.api.Test;

/** TrackEvent without a session: the descriptor it registers, and calls that must stay no-ops. */
class TrackEventTest {
  @Test
  void registersTrackEventWithItsCategoriesAndIncrementalStateClears() {
    Category a = Category.described("a", "the a things", "slow");
    Category b = Category.of("b");
    TrackEvent te = TrackEvent.builder().categories(a, b).build();
    DataSourceDescriptor d = te.dataSource().descriptor();
    assertEquals("track_event", d.getName());
    assertTrue(d.getHandlesIncrementalStateClear(), "the service sends clear_incremental_state only if asked");
    assertTrue(d.getWillNotifyOnStart(), "a started session has its categories on (as upstream's SDK registers)");
    assertTrue(d.getWillNotifyOnStop(), "a stopped session has its categories off (as upstream's SDK registers)");
    assertEquals(List.of(
        TrackEventCategory.newBuilder().setName("a").setDescription("the a things").addTags("slow").build(),
        TrackEventCategory.newBuilder().setName("b").setDescription("").build()),
        d.getTrackEventDescriptor().getAvailableCategoriesList());
  }

  @Test
  void withoutASessionEveryCallIsANoOpAndScopesAreShared() {
    Category a = Category.of("a");
    TrackEvent te = TrackEvent.builder().categories(a).build();
    assertFalse(a.isEnabled());
    TrackEvent.Scope s1 = te.slice(a, "x");
    TrackEvent.Scope s2 = te.slice(a, "y", "k", 1);
    assertSame(s1, s2, "no allocation per scope");
    s1.close();
    te.instant(a, "i", ev -> {
      throw new AssertionError("not called while disabled");
    });
    te.counter(a, Track.counter("c"), 1L);
    te.flush();
  }

  @Test
  void aCategoryBelongsToOneTrackEvent() {
    Category a = Category.of("a");
    TrackEvent.builder().categories(a).build();
    assertThrows(IllegalStateException.class, () -> TrackEvent.builder().categories(a).build());
    TrackEvent other = TrackEvent.builder().build();
    assertThrows(IllegalArgumentException.class, () -> other.slice(a, "x"));
  }

  @Test
  void aCategoryGivenToNoBuilderIsRefusedByEveryCallNotOnlySlice() {
    TrackEvent te = TrackEvent.builder().categories(Category.of("known")).build();
    Category stray = Category.of("stray");
    assertFalse(stray.isEnabled());
    List<Runnable> calls = List.of(
        () -> te.begin(stray, "b"),
        () -> te.begin(stray, "b", "k", 1L),
        () -> te.begin(stray, "b", "k", "v"),
        () -> te.begin(stray, "b", ev -> {}),
        () -> te.begin(stray, Track.named("t"), "b"),
        () -> te.end(stray),
        () -> te.end(stray, Track.named("t")),
        () -> te.slice(stray, "s"),
        () -> te.slice(stray, "s", "k", 1L),
        () -> te.instant(stray, "i"),
        () -> te.instant(stray, "i", "k", 1L),
        () -> te.instant(stray, "i", "a", 1L, "b", 2L),
        () -> te.instant(stray, "i", ev -> {}),
        () -> te.counter(stray, Track.counter("c"), 1L),
        () -> te.counter(stray, Track.counter("c"), 1.5),
        () -> te.beginAt(1, stray, "b", null),
        () -> te.endAt(1, stray, null),
        () -> te.beginAt(1, stray, Track.named("t"), "b", null),
        () -> te.endAt(1, stray, Track.named("t"), null),
        () -> te.instantAt(1, stray, null, "i", null));
    for (int i = 0; i < calls.size(); i++) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, calls.get(i)::run, "call " + i);
      assertTrue(e.getMessage().contains("stray"), e.getMessage());
    }
  }

  @Test
  void dynamicCategoriesAreMadeOnceAndTracksHaveStableDistinctUuids() {
    TrackEvent te = TrackEvent.builder().build();
    Category d = te.dynamicCategory("dyn");
    assertSame(d, te.dynamicCategory("dyn"));
    assertTrue(te.categories().contains(d));
    assertEquals(Track.named("q").uuid(), Track.named("q").uuid());
    assertNotEquals(Track.named("q").uuid(), Track.named("q", 2).uuid());
    assertNotEquals(Track.named("q").uuid(), Track.counter("q").uuid());
    assertNotEquals(0, Track.named("").uuid());
  }
}
