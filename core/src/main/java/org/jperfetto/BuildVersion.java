package org.jperfetto;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * jperfetto's version, as the build wrote it (pom.xml's {@code project.version}, filtered into
 * {@code version.properties} next to this class). Every string that names the version (the
 * producer's sdk_version, the service's tracing_service_version, {@code jperfetto --version}) is
 * made from it, so they cannot disagree. It sits in the module's root package, which depends on
 * java.base only and which every package may use: the version is a fact about jperfetto as a whole,
 * not about any one layer, and the producer, the service and the CLI all name it.
 */
public final class BuildVersion {
  /** The version, e.g. {@code 0.1.0} or {@code 0.1.0-SNAPSHOT}. */
  public static final String VERSION = load();
  /** "jperfetto " + {@link #VERSION}: how jperfetto names itself to peers and users. */
  public static final String NAME = "jperfetto " + VERSION;

  private BuildVersion() {}

  private static String load() {
    try (InputStream in = BuildVersion.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        throw new IllegalStateException("org/jperfetto/version.properties missing from the jar");
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("version", "");
      if (v.isEmpty() || v.startsWith("${")) {
        throw new IllegalStateException("version.properties was not filtered by the build: version=" + v);
      }
      return v;
    } catch (IOException e) {
      throw new UncheckedIOException("reading org/jperfetto/version.properties", e);
    }
  }
}
