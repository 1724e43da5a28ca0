package org.jperfetto.opentelemetry.agent;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The service the OpenTelemetry Java agent loads from the extension jar, compiled for Java 8 like
 * the agent itself: on a JDK older than 22 it says once that the extension is inactive (jperfetto
 * needs the FFM API) and adds nothing; otherwise it hands over to {@code PerfettoExtension}.
 */
public final class ExtensionEntry implements AutoConfigurationCustomizerProvider {
  private static final String EXTENSION_CLASS = "org.jperfetto.opentelemetry.agent.PerfettoExtension";
  private static final int MIN_FEATURE = 22;

  @Override
  public void customize(AutoConfigurationCustomizer autoConfiguration) {
    int feature = feature(System.getProperty("java.specification.version", "0"));
    if (feature < MIN_FEATURE) {
      Logger.getLogger("org.jperfetto.opentelemetry").log(Level.WARNING, "jperfetto OpenTelemetry extension"
          + " inactive: it needs Java " + MIN_FEATURE + " or newer, this JVM is Java "
          + System.getProperty("java.specification.version") + "; spans are not written to Perfetto");
      return;
    }
    AutoConfigurationCustomizerProvider extension;
    try {
      extension = (AutoConfigurationCustomizerProvider) Class.forName(EXTENSION_CLASS, true,
          ExtensionEntry.class.getClassLoader()).getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("jperfetto OpenTelemetry extension: cannot load " + EXTENSION_CLASS, e);
    }
    extension.customize(autoConfiguration);
  }

  @Override
  public int order() {
    return 0;
  }

  /** The feature release of a java.specification.version ("1.8" is 8, "25" is 25). */
  static int feature(String version) {
    String v = version.startsWith("1.") ? version.substring(2) : version;
    int dot = v.indexOf('.');
    try {
      return Integer.parseInt(dot < 0 ? v : v.substring(0, dot));
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
