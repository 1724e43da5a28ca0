package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import com.google.protobuf.UnknownFieldSet;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Text configs, as users write them for upstream's perfetto CLI, parse into our TraceConfig with
 * TextFormat. The encoded result is also read back schema-free, by field number, so a name bound
 * to the wrong number fails here even where both sides of a round trip would agree.
 */
class TextConfigTest {
  private static TraceConfig parse(String text) throws TextFormat.ParseException {
    TraceConfig.Builder builder = TraceConfig.newBuilder();
    TextFormat.merge(text, builder);
    return builder.build();
  }

  @Test
  void sessionConfigOfTheCaptures() throws Exception {
    TraceConfig config = parse(Files.readString(InteropCaptures.interopDir().resolve("session.pbtxt")));
    assertEquals(1, config.getBuffersCount());
    assertEquals(4096, config.getBuffers(0).getSizeKb());
    assertEquals(TraceConfig.BufferConfig.FillPolicy.DISCARD, config.getBuffers(0).getFillPolicy());
    assertEquals(1, config.getDataSourcesCount());
    assertEquals("track_event", config.getDataSources(0).getConfig().getName());
    assertEquals(3000, config.getDurationMs());
  }

  private static final String RICH = """
      buffers { size_kb: 65536 fill_policy: RING_BUFFER }
      buffers { size_kb: 4096 fill_policy: DISCARD }
      data_sources {
        config {
          name: "linux.ftrace"
          target_buffer: 0
          ftrace_config {
            ftrace_events: "sched/sched_switch"
            ftrace_events: "power/cpu_frequency"
            atrace_categories: "gfx"
            buffer_size_kb: 2048
            drain_period_ms: 250
          }
        }
      }
      data_sources {
        config {
          name: "linux.process_stats"
          target_buffer: 1
          process_stats_config { scan_all_processes_on_start: true proc_stats_poll_ms: 1000 }
        }
      }
      data_sources {
        config {
          name: "track_event"
          track_event_config { enabled_categories: "ref" enabled_categories: "ref.counter" disabled_categories: "*" }
        }
        producer_name_filter: "sdk_app_v58"
      }
      builtin_data_sources { primary_trace_clock: BUILTIN_CLOCK_MONOTONIC snapshot_interval_ms: 5000 }
      producers { producer_name: "sdk_app_v58" shm_size_kb: 1024 page_size_kb: 16 }
      duration_ms: 10000
      write_into_file: true
      file_write_period_ms: 2500
      max_file_size_bytes: 100000000
      flush_period_ms: 1000
      flush_timeout_ms: 7000
      data_source_stop_timeout_ms: 6000
      lockdown_mode: LOCKDOWN_SET
      trigger_config {
        trigger_mode: STOP_TRACING
        triggers { name: "jank" producer_name_regex: "sdk_.*" stop_delay_ms: 500 }
        trigger_timeout_ms: 30000
      }
      incremental_state_config { clear_period_ms: 2000 }
      unique_session_name: "jperfetto_rich"
      compression_type: COMPRESSION_TYPE_DEFLATE
      """;

  @Test
  @SuppressWarnings("deprecation") // compression_type: the older way a config asks for deflate
  void richConfigParsesIntoTheNamedFields() throws Exception {
    TraceConfig config = parse(RICH);
    assertEquals(List.of(65536, 4096),
        config.getBuffersList().stream().map(TraceConfig.BufferConfig::getSizeKb).toList());
    assertEquals(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER, config.getBuffers(0).getFillPolicy());

    FtraceConfig ftrace = config.getDataSources(0).getConfig().getFtraceConfig();
    assertEquals(List.of("sched/sched_switch", "power/cpu_frequency"), ftrace.getFtraceEventsList());
    assertEquals(List.of("gfx"), ftrace.getAtraceCategoriesList());
    assertEquals(2048, ftrace.getBufferSizeKb());
    assertEquals(250, ftrace.getDrainPeriodMs());

    DataSourceConfig ps = config.getDataSources(1).getConfig();
    assertEquals(1, ps.getTargetBuffer());
    assertTrue(ps.getProcessStatsConfig().getScanAllProcessesOnStart());
    assertEquals(1000, ps.getProcessStatsConfig().getProcStatsPollMs());

    TraceConfig.DataSource te = config.getDataSources(2);
    assertEquals(List.of("ref", "ref.counter"), te.getConfig().getTrackEventConfig().getEnabledCategoriesList());
    assertEquals(List.of("*"), te.getConfig().getTrackEventConfig().getDisabledCategoriesList());
    assertEquals(List.of("sdk_app_v58"), te.getProducerNameFilterList());

    assertEquals(BuiltinClock.BUILTIN_CLOCK_MONOTONIC, config.getBuiltinDataSources().getPrimaryTraceClock());
    assertEquals(16, config.getProducers(0).getPageSizeKb());
    assertEquals(1024, config.getProducers(0).getShmSizeKb());
    assertEquals(10000, config.getDurationMs());
    assertTrue(config.getWriteIntoFile());
    assertEquals(2500, config.getFileWritePeriodMs());
    assertEquals(100_000_000L, config.getMaxFileSizeBytes());
    assertEquals(7000, config.getFlushTimeoutMs());
    assertEquals(6000, config.getDataSourceStopTimeoutMs());
    assertEquals(TraceConfig.LockdownModeOperation.LOCKDOWN_SET, config.getLockdownMode());
    assertEquals(TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING, config.getTriggerConfig().getTriggerMode());
    assertEquals("jank", config.getTriggerConfig().getTriggers(0).getName());
    assertEquals(500, config.getTriggerConfig().getTriggers(0).getStopDelayMs());
    assertEquals(30000, config.getTriggerConfig().getTriggerTimeoutMs());
    assertEquals(2000, config.getIncrementalStateConfig().getClearPeriodMs());
    assertEquals("jperfetto_rich", config.getUniqueSessionName());
    assertEquals(TraceConfig.CompressionType.COMPRESSION_TYPE_DEFLATE, config.getCompressionType());

    assertEquals(config, parse(TextFormat.printer().printToString(config)), "text round trip");
  }

  /** Reads the encoded config back by field number only, as upstream's traced would see it. */
  @Test
  void richConfigEncodesUpstreamsFieldNumbers() throws Exception {
    UnknownFieldSet wire = UnknownFieldSet.parseFrom(parse(RICH).toByteArray());
    assertEquals(List.of(10000L), wire.getField(3).getVarintList(), "duration_ms = 3");
    assertEquals(List.of(2L), wire.getField(5).getVarintList(), "lockdown_mode = 5, LOCKDOWN_SET = 2");
    assertEquals(List.of(1L), wire.getField(8).getVarintList(), "write_into_file = 8");
    assertEquals(List.of(2500L), wire.getField(9).getVarintList(), "file_write_period_ms = 9");
    assertEquals(List.of(100_000_000L), wire.getField(10).getVarintList(), "max_file_size_bytes = 10");
    assertEquals(List.of(1000L), wire.getField(13).getVarintList(), "flush_period_ms = 13");
    assertEquals(List.of(7000L), wire.getField(14).getVarintList(), "flush_timeout_ms = 14");
    assertEquals(List.of(6000L), wire.getField(23).getVarintList(), "data_source_stop_timeout_ms = 23");
    assertEquals(List.of(ByteString.copyFromUtf8("jperfetto_rich")), wire.getField(22).getLengthDelimitedList(),
        "unique_session_name = 22");
    assertEquals(List.of(1L), wire.getField(24).getVarintList(), "compression_type = 24, DEFLATE = 1");

    UnknownFieldSet buffer = UnknownFieldSet.parseFrom(wire.getField(1).getLengthDelimitedList().get(0));
    assertEquals(List.of(65536L), buffer.getField(1).getVarintList(), "BufferConfig.size_kb = 1");
    assertEquals(List.of(1L), buffer.getField(4).getVarintList(), "fill_policy = 4, RING_BUFFER = 1");

    UnknownFieldSet triggers = UnknownFieldSet.parseFrom(wire.getField(17).getLengthDelimitedList().get(0));
    assertEquals(List.of(2L), triggers.getField(1).getVarintList(), "trigger_mode = 1, STOP_TRACING = 2");
    assertEquals(List.of(30000L), triggers.getField(3).getVarintList(), "trigger_timeout_ms = 3");
    UnknownFieldSet trigger = UnknownFieldSet.parseFrom(triggers.getField(2).getLengthDelimitedList().get(0));
    assertEquals(List.of(ByteString.copyFromUtf8("jank")), trigger.getField(1).getLengthDelimitedList(), "name = 1");
    assertEquals(List.of(500L), trigger.getField(3).getVarintList(), "stop_delay_ms = 3");

    UnknownFieldSet incremental = UnknownFieldSet.parseFrom(wire.getField(21).getLengthDelimitedList().get(0));
    assertEquals(List.of(2000L), incremental.getField(1).getVarintList(),
        "incremental_state_config = 21 {clear_period_ms = 1}");

    UnknownFieldSet source = UnknownFieldSet.parseFrom(wire.getField(2).getLengthDelimitedList().get(2));
    UnknownFieldSet dsConfig = UnknownFieldSet.parseFrom(source.getField(1).getLengthDelimitedList().get(0));
    UnknownFieldSet trackEvent = UnknownFieldSet.parseFrom(dsConfig.getField(113).getLengthDelimitedList().get(0));
    assertEquals(List.of(ByteString.copyFromUtf8("ref"), ByteString.copyFromUtf8("ref.counter")),
        trackEvent.getField(2).getLengthDelimitedList(), "track_event_config = 113 {enabled_categories = 2}");
    UnknownFieldSet ftraceSource = UnknownFieldSet.parseFrom(wire.getField(2).getLengthDelimitedList().get(0));
    UnknownFieldSet ftrace = UnknownFieldSet.parseFrom(UnknownFieldSet.parseFrom(
        ftraceSource.getField(1).getLengthDelimitedList().get(0)).getField(100).getLengthDelimitedList().get(0));
    assertEquals(List.of(2048L), ftrace.getField(10).getVarintList(), "ftrace_config = 100 {buffer_size_kb = 10}");
  }

  @Test
  void misspelledFieldIsAClearError() {
    TextFormat.ParseException e = assertThrows(TextFormat.ParseException.class,
        () -> parse("buffers { size_kb: 1024 fill_polcy: DISCARD }"));
    assertTrue(e.getMessage().contains("fill_polcy"), e.getMessage());
  }
}
