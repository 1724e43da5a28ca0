package org.jperfetto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.jperfetto.producer.TracingProducer;
import org.junit.jupiter.api.Test;

/** One version, from pom.xml: the filtered resource, and every string made from it. */
class BuildVersionTest {
  /** pom.xml's project.version, as surefire passes it. */
  private static final String POM_VERSION = System.getProperty("jperfetto.version");

  @Test
  void versionIsThePomsProjectVersion() {
    assertFalse(POM_VERSION == null || POM_VERSION.isEmpty(), "surefire passes -Djperfetto.version");
    assertEquals(POM_VERSION, BuildVersion.VERSION);
    assertEquals("jperfetto " + POM_VERSION, BuildVersion.NAME);
  }

  @Test
  void producerSdkVersionNamesTheBuildVersion() {
    assertEquals("jperfetto " + POM_VERSION, TracingProducer.SDK_VERSION);
  }
}
