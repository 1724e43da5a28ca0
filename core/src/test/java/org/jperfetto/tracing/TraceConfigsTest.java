package org.jperfetto.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TrackEventConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The typed config builder and the text loader give the TraceConfigs a hand-built one would. */
class TraceConfigsTest {
  @TempDir
  Path dir;

  private static DataSourceConfig source(TraceConfig c, String name) {
    return c.getDataSourcesList().stream().map(TraceConfig.DataSource::getConfig)
        .filter(d -> d.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " in " + c));
  }

  @Test
  void everyBuiltConfigClearsItsRingUnlessToldNotTo() {
    TraceConfig c = TraceConfigs.builder().trackEvent().build();
    assertEquals(TraceConfigs.DEFAULT_CLEAR_PERIOD.toMillis(), c.getIncrementalStateConfig().getClearPeriodMs());
    assertEquals(c.getIncrementalStateConfig(), TraceConfigs.defaults().getIncrementalStateConfig());
    assertEquals(250, TraceConfigs.builder().jfr().clearPeriod(Duration.ofMillis(250)).build()
        .getIncrementalStateConfig().getClearPeriodMs());
    TraceConfig never = TraceConfigs.builder().trackEvent().clearPeriod(Duration.ZERO).build();
    assertTrue(never.getIncrementalStateConfig().hasClearPeriodMs(), "an explicit 0: the service adds none");
    assertEquals(0, never.getIncrementalStateConfig().getClearPeriodMs());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TraceConfigs.builder().clearPeriod(Duration.ofMillis(50)));
    assertTrue(e.getMessage().contains("clear period below 100 ms"), e.getMessage());
  }

  @Test
  void defaultsRecordTrackEventAndJfrIntoOne32MiBBufferUntilStopped() {
    TraceConfig c = TraceConfigs.defaults();
    assertEquals(1, c.getBuffersCount());
    assertEquals(32 * 1024, c.getBuffers(0).getSizeKb());
    assertEquals(0, c.getDurationMs());
    assertEquals(List.of("track_event", "jvm.jfr"),
        c.getDataSourcesList().stream().map(d -> d.getConfig().getName()).toList());
    assertEquals(0, source(c, "track_event").getTrackEventConfig().getEnabledCategoriesCount(),
        "no category list: the TrackEvent defaults");
    assertFalse(source(c, "jvm.jfr").hasLegacyConfig());
  }

  @Test
  void builderSetsCategoriesJfrConfigBufferDurationAndFileWrites() {
    TraceConfig c = TraceConfigs.builder().trackEvent("app", "db.*").jfr("groups=gc")
        .bufferSizeKb(4096).duration(Duration.ofSeconds(3)).writeIntoFile(Duration.ofMillis(500)).build();
    assertEquals(4096, c.getBuffers(0).getSizeKb());
    assertEquals(3000, c.getDurationMs());
    assertTrue(c.getWriteIntoFile());
    assertEquals(500, c.getFileWritePeriodMs());
    assertEquals(500, c.getFlushPeriodMs(), "write_into_file without flush_period_ms is flagged by trace_processor");
    var te = source(c, "track_event").getTrackEventConfig();
    assertEquals(List.of("*"), te.getDisabledCategoriesList());
    assertEquals(List.of("app", "db.*"), te.getEnabledCategoriesList());
    assertEquals("groups=gc", source(c, "jvm.jfr").getLegacyConfig());
  }

  @Test
  void badArgumentsAreRefusedWhenGivenNotAtStart() {
    var b = TraceConfigs.builder();
    assertThrows(IllegalArgumentException.class, () -> b.bufferSizeKb(0));
    assertThrows(IllegalArgumentException.class, () -> b.bufferSizeKb(1023));
    assertThrows(IllegalArgumentException.class, () -> b.duration(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> b.duration(Duration.ofDays(30)));
    assertThrows(IllegalArgumentException.class, () -> b.writeIntoFile(Duration.ofMillis(99)));
    assertThrows(IllegalArgumentException.class, () -> b.trackEvent(new String[0]));
    assertThrows(IllegalArgumentException.class, () -> b.trackEvent("ok", ""));
    IllegalArgumentException jfr = assertThrows(IllegalArgumentException.class, () -> b.jfr("groups=nope"));
    assertTrue(jfr.getMessage().contains("nope"), jfr.getMessage());
    IllegalStateException empty = assertThrows(IllegalStateException.class, b::build);
    assertTrue(empty.getMessage().contains("no data source"), empty.getMessage());
  }

  @Test
  void textConfigsLoadAndErrorsGiveFileLineAndColumn() throws Exception {
    Path file = dir.resolve("app.pbtxt");
    Files.writeString(file, """
        buffers { size_kb: 2048 }
        data_sources { config { name: "track_event" track_event_config { enabled_categories: "app" } } }
        duration_ms: 1500
        """);
    TraceConfig c = TraceConfigs.load(file);
    assertEquals(TraceConfig.newBuilder().addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(2048))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName("track_event").setTrackEventConfig(TrackEventConfig.newBuilder()
                .addEnabledCategories("app"))))
        .setDurationMs(1500).build(), c);

    Files.writeString(file, "buffers { size_kb: 2048 }\nno_such_field: 1\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TraceConfigs.load(file));
    assertTrue(e.getMessage().startsWith(file + ":2:1: error: "), e.getMessage());
    assertTrue(e.getMessage().contains("no_such_field"), e.getMessage());
  }
}
