package org.jperfetto.micrometer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jperfetto.producer.track.SpanRecorder;
import org.junit.jupiter.api.Test;

/** docs/micrometer.md names what the build and the handler really are: versions, names and bounds. */
class MicrometerDocsTest {
  private static String doc() throws IOException {
    return Files.readString(Path.of(System.getProperty("jperfetto.root"), "docs", "micrometer.md"));
  }

  @Test
  void theGuideNamesTheVersionsTheBuildUses() throws IOException {
    String doc = doc();
    String version = System.getProperty("jperfetto.version");
    assertTrue(doc.contains("<artifactId>jperfetto-micrometer</artifactId>\n  <version>" + version + "</version>"),
        "the Maven snippet names version " + version);
    assertTrue(doc.contains("\"org.jperfetto:jperfetto-micrometer:" + version + "\""), "the Gradle line too");
    assertTrue(doc.contains("Micrometer " + System.getProperty("micrometer.version")),
        "the Micrometer version of the pom");
  }

  @Test
  void theGuideNamesTheHandlersCategoryTracksAndBounds() throws IOException {
    String doc = doc().replaceAll("\\s+", " ");
    for (String fact : new String[] {
        "category `" + PerfettoObservationHandler.CATEGORY + "`",
        "named `" + PerfettoObservationHandler.ASYNC_TRACK + "`",
        "argument `" + ObservationRecord.NAME_ARG + "`",
        "`" + ObservationRecord.EXCEPTION_ARG + "` (the class and message)",
        "`" + ObservationRecord.UNFINISHED_ARG + " = true`",
        "at most " + ObservationRecord.MAX_KEY_VALUES + " key values",
        "counted in `" + ObservationRecord.DROPPED_KEY_VALUES_ARG + "`",
        "at most " + ObservationRecord.MAX_EVENTS + " events",
        "counted in `" + ObservationRecord.DROPPED_EVENTS_ARG + "`",
        ObservationRecord.MAX_TEXT_CHARS + " characters",
        ObservationRecord.MAX_CHILD_FLOWS + " flows",
        String.format("%,d observations open", PerfettoObservationHandler.MAX_OPEN),
        "among the " + SpanRecorder.MAX_LANES,
        "an instant `" + SpanRecorder.ERROR_INSTANT + "` at its end"}) {
      assertTrue(doc.contains(fact), "docs/micrometer.md says: " + fact);
    }
  }
}
