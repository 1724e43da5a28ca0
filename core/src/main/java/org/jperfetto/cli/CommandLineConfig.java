package org.jperfetto.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.jperfetto.producer.jfr.JfrDataSource;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.FtraceConfig;
import org.jperfetto.protos.TraceAttributes;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ClearPeriod;

/**
 * Builds the TraceConfig of a command line: from a config file (binary, or text with --txt), or
 * from the light options (-t, -b, -s, --app and categories) the way upstream's perfetto does,
 * with one jperfetto twist: a category without a '/' selects track_event categories (upstream
 * reads it as an Android atrace category); "sched/sched_switch"-style ones stay ftrace events.
 */
final class CommandLineConfig {
  /** A config that cannot be used; the message is for the user. */
  static final class ConfigException extends Exception {
    ConfigException(String message) {
      super(message);
    }
  }

  static final String DEFAULT_TIME = "10s";
  /** The library's default buffer (one fact, {@link org.jperfetto.tracing.TraceConfigs#DEFAULT_BUFFER_KB}). */
  static final String DEFAULT_BUFFER = org.jperfetto.tracing.TraceConfigs.DEFAULT_BUFFER_KB / 1024 + "mb";
  static final int LIGHT_FLUSH_PERIOD_MS = 30_000;

  private CommandLineConfig() {}

  /** Parses a config file's bytes; {@code name} labels errors ("config.pbtxt:3:7: ..."). */
  static TraceConfig parse(byte[] raw, String name, boolean text, boolean lossy) throws ConfigException {
    if (text && !lossy) {
      try {
        return org.jperfetto.tracing.TraceConfigs.parseText(new String(raw, StandardCharsets.UTF_8), name);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
    }
    if (lossy) {
      // Unknown fields are skipped here only: the library's parser refuses them.
      TraceConfig.Builder builder = TraceConfig.newBuilder();
      TextFormat.Parser parser = TextFormat.Parser.newBuilder().setAllowUnknownFields(lossy).build();
      try {
        parser.merge(new String(raw, StandardCharsets.UTF_8), builder);
      } catch (TextFormat.ParseException e) {
        throw new ConfigException(name + ":" + e.getLine() + ":" + e.getColumn() + ": error: "
            + stripPosition(e.getMessage()));
      }
      return builder.build();
    }
    try {
      return TraceConfig.parseFrom(raw);
    } catch (InvalidProtocolBufferException e) {
      String message = "The trace config is invalid, bailing out.";
      if (looksLikeText(raw)) {
        message += "\nLooks like you are passing a textual config but I'm expecting a proto-encoded "
            + "binary config.\nTry adding --txt to the cmdline.";
      }
      throw new ConfigException(message);
    }
  }

  /** protobuf's message starts with "line:column: "; the caller prints its own position. */
  private static String stripPosition(String message) {
    return message.replaceFirst("^-?\\d+:-?\\d+: ", "");
  }

  private static boolean looksLikeText(byte[] raw) {
    for (byte b : raw) {
      if (!((b >= 32 && b <= 126) || (b >= 9 && b <= 13))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The config for the light options (upstream's CreateConfigFromOptions, categories as above),
   * plus a clear period so the ring buffer stays readable once it wraps (upstream sets none).
   */
  static TraceConfig fromOptions(CliOptions o) throws ConfigException {
    long durationMs = convert(o.time != null ? o.time : DEFAULT_TIME, TIME_UNITS, "--time");
    long bufferKb = convert(o.buffer != null ? o.buffer : DEFAULT_BUFFER, SIZE_UNITS, "--buffer");
    long maxFileKb = convert(o.size != null ? o.size : "", SIZE_UNITS, "--size");
    if (durationMs > 0xFFFF_FFFFL || bufferKb > 0xFFFF_FFFFL) {
      throw new ConfigException((durationMs > 0xFFFF_FFFFL ? "--time" : "--buffer") + " argument is too large");
    }
    List<String> ftraceEvents = new ArrayList<>();
    List<String> trackEventCategories = new ArrayList<>();
    for (String category : o.categories) {
      (category.contains("/") ? ftraceEvents : trackEventCategories).add(category);
    }
    TraceConfig.Builder config = TraceConfig.newBuilder()
        .setDurationMs((int) durationMs)
        .setMaxFileSizeBytes(maxFileKb * 1024)
        .setFlushPeriodMs(LIGHT_FLUSH_PERIOD_MS)
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb((int) bufferKb))
        .setIncrementalStateConfig(clearedEvery(ClearPeriod.DEFAULT_MS));
    if (maxFileKb > 0) {
      config.setWriteIntoFile(true);
    }
    TrackEventConfig.Builder trackEvent = TrackEventConfig.newBuilder();
    if (!trackEventCategories.isEmpty()) {
      trackEvent.addDisabledCategories("*").addAllEnabledCategories(trackEventCategories);
    }
    config.addDataSources(dataSource(DataSourceConfig.newBuilder().setName("track_event")
        .setTrackEventConfig(trackEvent)));
    if (!ftraceEvents.isEmpty() || !o.apps.isEmpty()) {
      config.addDataSources(dataSource(DataSourceConfig.newBuilder().setName("linux.ftrace")
          .setFtraceConfig(FtraceConfig.newBuilder().addAllFtraceEvents(ftraceEvents)
              .addAllAtraceApps(o.apps).setSymbolizeKsyms(true))));
    }
    for (String extra : LIGHT_EXTRAS) {
      config.addDataSources(dataSource(DataSourceConfig.newBuilder().setName(extra).setTargetBuffer(0)));
    }
    for (String jvm : JVM_EXTRAS) {
      config.addDataSources(dataSource(DataSourceConfig.newBuilder().setName(jvm).setTargetBuffer(0)));
    }
    return config.build();
  }

  /** incremental_state_config with this clear period (see {@link ClearPeriod}). */
  static TraceConfig.IncrementalStateConfig clearedEvery(int ms) {
    return TraceConfig.IncrementalStateConfig.newBuilder().setClearPeriodMs(ms).build();
  }

  private static TraceConfig.DataSource dataSource(DataSourceConfig.Builder config) {
    return TraceConfig.DataSource.newBuilder().setConfig(config).build();
  }

  /** What the command line adds to any config: a trace uuid if none, and --add-attribute pairs. */
  @SuppressWarnings("deprecation") // trace_uuid_msb/lsb: deprecated upstream, and still how perfetto sends it
  static TraceConfig finish(TraceConfig config, List<String> attributes) {
    TraceConfig.Builder b = config.toBuilder();
    if (config.getTraceUuidMsb() == 0 && config.getTraceUuidLsb() == 0) {
      UUID uuid = UUID.randomUUID();
      b.setTraceUuidMsb(uuid.getMostSignificantBits()).setTraceUuidLsb(uuid.getLeastSignificantBits());
    }
    if (!attributes.isEmpty()) {
      TraceAttributes.Builder attrs = b.getTraceAttributesBuilder();
      for (String a : attributes) {
        int eq = a.indexOf('=');
        attrs.addAttribute(TraceAttributes.Attribute.newBuilder()
            .setKey(eq < 0 ? a : a.substring(0, eq)).setStringValue(eq < 0 ? "" : a.substring(eq + 1)));
      }
    }
    return b.build();
  }

  /**
   * Data sources the light options add whatever the user asked for (as upstream's CLI does): they
   * record where traced_probes runs, and nothing is said when no producer offers them.
   */
  static final List<String> LIGHT_EXTRAS = List.of("linux.process_stats", "linux.system_info");

  /**
   * The JVM's own data sources the light options record from every JVM that offers them (the
   * agent, the library's JFR data source): its GC, JIT, locks and Java stack samples beside its
   * slices, with their default config. Nothing is said when no JVM offers them; a config file
   * chooses otherwise.
   */
  static final List<String> JVM_EXTRAS = List.of(JfrDataSource.NAME);

  /** The data sources the light options add that no warning names when nobody offers them. */
  static final List<String> QUIET_EXTRAS = Stream.concat(LIGHT_EXTRAS.stream(),
      JVM_EXTRAS.stream()).toList();

  private record Unit(String suffix, long multiplier) {}

  static final List<Unit> TIME_UNITS = List.of(new Unit("ms", 1), new Unit("s", 1000),
      new Unit("m", 60_000), new Unit("h", 3_600_000));
  static final List<Unit> SIZE_UNITS = List.of(new Unit("kb", 1), new Unit("mb", 1024),
      new Unit("gb", 1024 * 1024), new Unit("k", 1), new Unit("m", 1024), new Unit("g", 1024 * 1024));

  /** "10s" -> 10000 with TIME_UNITS; "" and "0" are 0; a unit is required otherwise (as upstream). */
  static long convert(String arg, List<Unit> units, String flag) throws ConfigException {
    if (arg.isEmpty() || arg.equals("0")) {
      return 0;
    }
    int i = 0;
    while (i < arg.length() && Character.isDigit(arg.charAt(i))) {
      i++;
    }
    if (i == 0 || i > 18) {
      throw invalid(arg, units, flag);
    }
    long value = Long.parseLong(arg.substring(0, i));
    String unit = arg.substring(i);
    for (Unit u : units) {
      if (u.suffix().equals(unit)) {
        try {
          return Math.multiplyExact(value, u.multiplier());
        } catch (ArithmeticException e) {
          throw new ConfigException(flag + " argument is too large: " + arg);
        }
      }
    }
    throw invalid(arg, units, flag);
  }

  /** Names the accepted forms: a whole number and one of the units, e.g. "10s" or "64mb". */
  private static ConfigException invalid(String arg, List<Unit> units, String flag) {
    String examples = units == TIME_UNITS ? "500ms, 10s, 5m, 1h" : "512kb, 64mb, 1gb";
    StringBuilder suffixes = new StringBuilder();
    for (Unit u : units) {
      suffixes.append(suffixes.isEmpty() ? "" : ", ").append(u.suffix());
    }
    return new ConfigException(flag + " argument is invalid: " + arg + " (expected a whole number and a unit ("
        + suffixes + "), e.g. " + examples + ")");
  }

  static long timeMs(String arg) throws ConfigException {
    return convert(arg, TIME_UNITS, "--time");
  }

  static long sizeKb(String arg) throws ConfigException {
    return convert(arg, SIZE_UNITS, "--size");
  }
}
