package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.jperfetto.testing.Fixtures;
import org.junit.jupiter.api.Test;

/**
 * A clone of the repository alone passes its tests: no source, test, build file or CI script
 * names a folder beside the repository (a user's clone has none), and the captures the interop
 * tests replay are inside it.
 */
class StandaloneCloneTest {
  /** The pattern of a path that climbs out of the repository into a sibling folder. */
  private static final String OUTSIDE = "../" + "shared";

  @Test
  void nothingTheBuildOrTestsReadLiesBesideTheRepository() throws IOException {
    // The build (root pom), CI, and every module's pom and sources.
    List<Path> roots = new java.util.ArrayList<>(List.of(Path.of("pom.xml"), Path.of(".ci")));
    try (Stream<Path> top = Files.list(Path.of(""))) {
      top.filter(d -> Files.isRegularFile(d.resolve("pom.xml"))).forEach(d -> {
        roots.add(d.resolve("pom.xml"));
        roots.add(d.resolve("src"));
      });
    }
    assertTrue(roots.contains(Path.of("core", "src")), "the core module among " + roots);
    List<String> offenders;
    try (Stream<Path> files = roots.stream().filter(Files::exists).flatMap(StandaloneCloneTest::walk)) {
      offenders = files.filter(Files::isRegularFile).filter(StandaloneCloneTest::namesOutside)
          .map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), offenders, "files that name " + OUTSIDE);
  }

  @Test
  void interopCapturesAreInTheRepository() {
    Path interop = Fixtures.interop().toAbsolutePath().normalize();
    assertTrue(interop.startsWith(Path.of("").toAbsolutePath()), interop + " is outside the repository");
    for (String session : List.of("v14producer_v58traced", "v58producer_v58traced",
        "sdkconsumer_v14_v58traced", "sdkconsumer_v58_v58traced")) {
      assertTrue(Files.isRegularFile(Fixtures.interop(session, "trace.pftrace")), session);
    }
    assertTrue(Files.isRegularFile(Fixtures.interop("smb", "smb_v58_full.bin")));
  }

  private static Stream<Path> walk(Path root) {
    try {
      return Files.walk(root).toList().stream();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean namesOutside(Path file) {
    try {
      return new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1).contains(OUTSIDE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
