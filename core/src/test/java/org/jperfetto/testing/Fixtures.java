package org.jperfetto.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the tests find the data they cannot make themselves: the repository's test-fixtures/
 * folder (its README says where each file came from). The pom passes its path as the system
 * property {@code jperfetto.fixtures}; without it (a test run from an IDE in the repository root)
 * the relative path is used. Nothing a test reads lies outside the repository.
 */
public final class Fixtures {
  private Fixtures() {}

  /** test-fixtures/interop/ joined with parts: captures of real upstream Perfetto traffic. */
  public static Path interop(String... parts) {
    Path root = Path.of(System.getProperty("jperfetto.fixtures", "test-fixtures"), "interop");
    if (!Files.isDirectory(root)) {
      throw new IllegalStateException("interop captures not found: " + root.toAbsolutePath()
          + " (run the tests from the repository root, or set -Djperfetto.fixtures)");
    }
    return root.resolve(Path.of("", parts));
  }
}
