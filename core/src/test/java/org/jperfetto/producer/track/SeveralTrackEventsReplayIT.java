package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.TrackEvent.Type;
import org.jperfetto.protos.TrackEventConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 49 against upstream traced's behaviour, replayed by {@link TrackTestHost}: for a producer
 * that registered track_event several times, traced sets up one instance per registration, all
 * with the same config, and then starts each; nothing says which registration an instance is for.
 * Every TrackEvent gets one instance per session, and the category filters select exactly its
 * slices.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SeveralTrackEventsReplayIT {
  static final int N = 150;
  static final String MARKER = "__marker__";

  @TempDir
  Path dir;

  /** A library's TrackEvent, its categories by name and a marker category of its own. */
  record Library(String name, TrackEvent trackEvent, Map<String, Category> categories) {
    static Library of(String name, String... categoryNames) {
      Map<String, Category> cats = new TreeMap<>();
      for (String c : categoryNames) {
        cats.put(c, Category.of(c));
      }
      cats.put(MARKER, Category.of(MARKER));
      return new Library(name, TrackEvent.builder().categories(cats.values().toArray(Category[]::new)).build(), cats);
    }

    void slices(String category, String sliceName) {
      Category c = categories.get(category);
      for (int i = 0; i < N; i++) {
        trackEvent.begin(c, sliceName, "i", i);
        trackEvent.end(c);
      }
    }
  }

  /** A producer with the libraries' TrackEvents, connected to a host that replays traced. */
  final class Replay implements AutoCloseable {
    final TrackTestHost host;
    final TracingProducer producer;
    final List<Library> libraries;
    private long nextId = 1;
    private long nextSession = 1;

    Replay(Library... libraries) throws Exception {
      this.libraries = List.of(libraries);
      String socket = dir.resolve("producer.sock").toString();
      host = new TrackTestHost(socket);
      TracingProducer.Builder b = TracingProducer.builder("replayed-traced").socketPath(socket)
          .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100));
      for (Library l : libraries) {
        b.dataSource(l.trackEvent().dataSource());
      }
      producer = b.start();
      host.setUpTracing(64, 4096, 16 << 20);
      TrackTestHost.await("every track_event registered", () -> Collections.frequency(host.registered(),
          TrackEvent.DATA_SOURCE_NAME) == libraries.length);
    }

    /**
     * One session recording the categories (and the markers): traced's setups and starts for every
     * registration; each library's slices; then the slices of this session read back by name.
     */
    Map<String, Integer> session(List<String> categories, Runnable emit) throws Exception {
      long session = nextSession++;
      long[] ids = new long[libraries.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = nextId++;
      }
      List<String> enabled = new ArrayList<>(categories);
      enabled.add(MARKER);
      host.startSession(session, TrackEventConfig.newBuilder().addDisabledCategories("*")
          .addAllEnabledCategories(enabled).build(), ids);
      TrackTestHost.await("every instance started", () -> host.startsAcked().containsAll(
          java.util.Arrays.stream(ids).boxed().toList()));
      for (Library l : libraries) {
        assertEquals(1, l.trackEvent().dataSource().activeInstances(), l.name() + ": one instance of the session");
      }
      emit.run();
      for (Library l : libraries) {
        l.trackEvent().instant(l.categories().get(MARKER), "done_" + l.name() + "_" + session);
        l.trackEvent().flush();
      }
      String done = "done_";
      String suffix = "_" + session;
      host.awaitPackets("every library's marker", libraries.size(), p -> p.getInternedData().getEventNamesList()
          .stream().anyMatch(n -> n.getName().startsWith(done) && n.getName().endsWith(suffix)));
      for (long id : ids) {
        host.stopDataSource(id);
      }
      TrackTestHost.await("every instance stopped", () -> libraries.stream()
          .noneMatch(l -> l.trackEvent().dataSource().isEnabled()));
      DecodedEvents d = new DecodedEvents();
      for (TrackTestHost.Packet p : host.packets()) {
        d.add(p.writerId(), p.packet());
      }
      assertEquals(List.of(), d.errors);
      Map<String, Integer> counts = new TreeMap<>();
      for (DecodedEvents.Event e : d.ofType(Type.TYPE_SLICE_BEGIN)) {
        if (e.name().endsWith(suffix)) {
          counts.merge(e.name().substring(0, e.name().length() - suffix.length()), 1, Integer::sum);
        }
      }
      return counts;
    }

    @Override
    public void close() {
      producer.close();
      host.close();
    }
  }

  @Test
  void twoLibrariesWithDisjointCategories() throws Exception {
    Library a = Library.of("a", "liba");
    Library b = Library.of("b", "libb");
    try (Replay r = new Replay(a, b)) {
      for (String filter : List.of("liba", "libb", "*")) {
        long session = r.nextSession;
        Map<String, Integer> counts = r.session(List.of(filter), () -> {
          a.slices("liba", "a_work_" + session);
          b.slices("libb", "b_work_" + session);
        });
        Map<String, Integer> expected = switch (filter) {
          case "liba" -> Map.of("a_work", N);
          case "libb" -> Map.of("b_work", N);
          default -> Map.of("a_work", N, "b_work", N);
        };
        assertEquals(expected, counts, "filter " + filter);
      }
    }
  }

  @Test
  void threeLibrariesWithOverlappingCategories() throws Exception {
    Library a = Library.of("a", "liba", "shared");
    Library b = Library.of("b", "libb", "shared");
    Library c = Library.of("c", "libc");
    try (Replay r = new Replay(a, b, c)) {
      for (List<String> filter : List.of(List.of("shared"), List.of("*"), List.of("liba", "libc"))) {
        long session = r.nextSession;
        Map<String, Integer> counts = r.session(filter, () -> {
          a.slices("liba", "a_work_" + session);
          a.slices("shared", "a_shared_" + session);
          b.slices("libb", "b_work_" + session);
          b.slices("shared", "b_shared_" + session);
          c.slices("libc", "c_work_" + session);
        });
        Map<String, Integer> expected = switch (String.join(",", filter)) {
          case "shared" -> Map.of("a_shared", N, "b_shared", N);
          case "liba,libc" -> Map.of("a_work", N, "c_work", N);
          default -> Map.of("a_work", N, "a_shared", N, "b_work", N, "b_shared", N, "c_work", N);
        };
        assertEquals(expected, counts, "filter " + filter);
      }
    }
  }
}
