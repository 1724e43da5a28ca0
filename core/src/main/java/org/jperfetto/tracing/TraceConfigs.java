package org.jperfetto.tracing;

import com.google.protobuf.TextFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jperfetto.producer.jfr.JfrConfig;
import org.jperfetto.producer.jfr.JfrDataSource;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ClearPeriod;
import org.jperfetto.service.ServiceLimits;

/**
 * The common {@link TraceConfig}s without protobuf plumbing: a {@link #builder()} for a track_event
 * session (with or without a category list), the {@code jvm.jfr} data source, the buffer size,
 * the duration, the incremental-state clear period and periodic writes into a file;
 * {@link #parseText} and {@link #load} for a config in protobuf text format (the {@code .pbtxt}
 * files {@code perfetto --txt -c} takes). A full
 * TraceConfig built by hand is accepted everywhere these are.
 *
 * <pre>{@code
 * TraceConfig config = TraceConfigs.builder()
 *     .trackEvent("app", "db")            // only these categories
 *     .jfr()                              // and the JVM's own events
 *     .bufferSizeKb(16 * 1024)
 *     .duration(Duration.ofSeconds(30))
 *     .build();
 * }</pre>
 */
public final class TraceConfigs {
  /** The buffer of {@link #defaults()} and of a builder that sets none: 32 MiB, as the CLI's. */
  public static final int DEFAULT_BUFFER_KB = 32 * 1024;
  /**
   * How often the data sources start a fresh incremental state when not told: the session's buffer
   * is a ring, and after it wraps only what follows a clear can be read (docs/flight-recorder.md).
   */
  public static final Duration DEFAULT_CLEAR_PERIOD = Duration.ofMillis(ClearPeriod.DEFAULT_MS);
  /** How often a session writing into a file writes and flushes when not told (upstream's 5 s). */
  public static final Duration DEFAULT_FILE_WRITE_PERIOD = Duration.ofMillis(5_000);

  private TraceConfigs() {}

  /**
   * One {@link #DEFAULT_BUFFER_KB} ring buffer cleared every {@link #DEFAULT_CLEAR_PERIOD},
   * track_event with its default categories (every one not tagged "slow" or "debug") and
   * {@code jvm.jfr} with its default groups; no duration (the session runs until stopped). A data
   * source no producer registered is simply not started.
   */
  public static TraceConfig defaults() {
    return builder().trackEvent().jfr().build();
  }

  /** A builder with no data source yet. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses a TraceConfig in protobuf text format.
   *
   * @param name what to call the text in errors, e.g. the file name
   * @throws IllegalArgumentException for text that is not a TraceConfig; the message reads
   *     {@code name:line:column: error: what}
   */
  public static TraceConfig parseText(String text, String name) {
    TraceConfig.Builder builder = TraceConfig.newBuilder();
    try {
      TextFormat.getParser().merge(text, builder);
    } catch (TextFormat.ParseException e) {
      // protobuf's message starts with its own "line:column: ": the one in front replaces it.
      String what = e.getMessage().replaceFirst("^-?\\d+:-?\\d+: ", "");
      throw new IllegalArgumentException(name + ":" + e.getLine() + ":" + e.getColumn() + ": error: " + what, e);
    }
    return builder.build();
  }

  /**
   * Reads a text-format TraceConfig file ({@code .pbtxt}), as {@link #parseText} with the file's
   * name in errors.
   */
  public static TraceConfig load(Path file) throws IOException {
    return parseText(Files.readString(file, StandardCharsets.UTF_8), file.toString());
  }

  /** Builds the common TraceConfigs; every setter checks its argument at once. */
  public static final class Builder {
    private int bufferKb = DEFAULT_BUFFER_KB;
    private Duration duration = Duration.ZERO;
    private Duration fileWritePeriod = Duration.ZERO;
    private Duration clearPeriod = DEFAULT_CLEAR_PERIOD;
    private List<String> categories;
    private String jfrConfig;

    private Builder() {}

    /** track_event with the default categories (all but those tagged "slow" or "debug"). */
    public Builder trackEvent() {
      categories = List.of();
      return this;
    }

    /**
     * track_event recording only these categories (names or upstream's patterns like
     * {@code "app.*"}); every other category is off, tagged or not.
     */
    public Builder trackEvent(String... enabledCategories) {
      if (enabledCategories.length == 0) {
        throw new IllegalArgumentException(
            "trackEvent(...) needs at least one category; trackEvent() takes the defaults");
      }
      List<String> list = new ArrayList<>();
      for (String c : enabledCategories) {
        if (Objects.requireNonNull(c, "category").isEmpty()) {
          throw new IllegalArgumentException("empty category name");
        }
        list.add(c);
      }
      categories = List.copyOf(list);
      return this;
    }

    /** The {@code jvm.jfr} data source with its default event groups and thresholds. */
    public Builder jfr() {
      return jfr("");
    }

    /**
     * The {@code jvm.jfr} data source with a config in its own syntax (e.g.
     * {@code "groups=gc,jit"}; see docs/jfr.md), carried in DataSourceConfig.legacy_config.
     *
     * @throws IllegalArgumentException naming the bad key or value
     */
    public Builder jfr(String config) {
      JfrConfig.parse(Objects.requireNonNull(config, "config"));
      jfrConfig = config;
      return this;
    }

    /** The size of the session's one buffer: more than 0 and a multiple of 4 KiB. */
    public Builder bufferSizeKb(int kb) {
      if (kb <= 0 || kb % 4 != 0) {
        throw new IllegalArgumentException("buffer size must be a positive multiple of 4 KiB: " + kb);
      }
      bufferKb = kb;
      return this;
    }

    /** Stops the session by itself after duration (zero: runs until stopped). */
    public Builder duration(Duration duration) {
      this.duration = checkedMillis(duration, "duration");
      return this;
    }

    /**
     * Makes the session write into a file (the service's write_into_file, given the file by
     * {@link InProcessSession#writeTo} or the consumer) every period, flushing the data sources
     * at the same period so each write has their recent data (at least 100 ms).
     */
    public Builder writeIntoFile(Duration period) {
      Duration p = checkedMillis(period, "file write period");
      if (p.toMillis() < 100) {
        throw new IllegalArgumentException("file write period below 100 ms: " + period.toMillis() + " ms");
      }
      fileWritePeriod = p;
      return this;
    }

    /**
     * How often the data sources clear their incremental state (interned names, track descriptors,
     * clock) and write it again ({@link #DEFAULT_CLEAR_PERIOD} unless set): once the ring buffer
     * wraps, what was written before the oldest clear still in it cannot be read. Zero: never
     * (a wrapped ring may then read as empty); else at least 100 ms.
     */
    public Builder clearPeriod(Duration period) {
      Duration p = checkedMillis(period, "clear period");
      if (!p.isZero() && p.toMillis() < ServiceLimits.MIN_PERIODIC_TASK_MS) {
        throw new IllegalArgumentException("clear period below " + ServiceLimits.MIN_PERIODIC_TASK_MS
            + " ms: " + period.toMillis() + " ms");
      }
      clearPeriod = p;
      return this;
    }

    /** The TraceConfig; a builder can go on and build again. */
    public TraceConfig build() {
      if (categories == null && jfrConfig == null) {
        throw new IllegalStateException("no data source: call trackEvent(...) or jfr(...) first");
      }
      TraceConfig.Builder c = TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(bufferKb))
          .setIncrementalStateConfig(TraceConfig.IncrementalStateConfig.newBuilder()
              .setClearPeriodMs((int) clearPeriod.toMillis()));
      if (!duration.isZero()) {
        c.setDurationMs((int) duration.toMillis());
      }
      if (!fileWritePeriod.isZero()) {
        int ms = (int) fileWritePeriod.toMillis();
        c.setWriteIntoFile(true).setFileWritePeriodMs(ms).setFlushPeriodMs(ms);
      }
      if (categories != null) {
        TrackEventConfig.Builder te = TrackEventConfig.newBuilder();
        if (!categories.isEmpty()) {
          te.addDisabledCategories("*").addAllEnabledCategories(categories);
        }
        c.addDataSources(dataSource(DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME)
            .setTrackEventConfig(te)));
      }
      if (jfrConfig != null) {
        DataSourceConfig.Builder jfr = DataSourceConfig.newBuilder().setName(JfrDataSource.NAME);
        if (!jfrConfig.isEmpty()) {
          jfr.setLegacyConfig(jfrConfig);
        }
        c.addDataSources(dataSource(jfr));
      }
      return c.build();
    }

    private static TraceConfig.DataSource.Builder dataSource(DataSourceConfig.Builder config) {
      return TraceConfig.DataSource.newBuilder().setConfig(config);
    }

    private static Duration checkedMillis(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.toMillis() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(what + " out of range (0 to 2^31-1 ms): " + d);
      }
      return d;
    }
  }
}
