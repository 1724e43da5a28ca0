package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.TextFormat;
import java.nio.charset.StandardCharsets;
import org.jperfetto.protos.TraceConfig;

/**
 * Coverage-guided fuzzing of the config parser behind {@code jperfetto --txt} / {@code --txt-lossy}
 * and binary configs (docs/fuzzing.md). Any bytes either parse or give a {@link
 * CommandLineConfig.ConfigException} that names the file (for text: file:line:column); a text config
 * that parses prints back to text that parses to the same config.
 */
class TraceConfigTextFuzzTest {
  @FuzzTest
  @DictionaryEntries({"buffers", "size_kb", "fill_policy", "RING_BUFFER", "DISCARD", "data_sources",
      "config", "name", "target_buffer", "duration_ms", "track_event_config", "enabled_categories",
      "ftrace_config", "ftrace_events", "write_into_file", "file_write_period_ms", "flush_period_ms",
      "trace_uuid_msb", "unique_session_name", "producer_name_filter", "{", "}", ":", "\"", "#",
      "<", ">", "[", "]", ",", "0x", "-", "true", "1e9", "\\x", "track_event", "linux.ftrace"})
  void parse(FuzzedDataProvider data) {
    boolean lossy = data.consumeBoolean();
    byte[] raw = data.consumeRemainingAsBytes();
    try {
      TraceConfig config = CommandLineConfig.parse(raw, "fuzz.pbtxt", true, lossy);
      String printed = TextFormat.printer().printToString(config);
      TraceConfig again =
          CommandLineConfig.parse(printed.getBytes(StandardCharsets.UTF_8), "printed.pbtxt", true, false);
      assertEquals(config, again, () -> "printed config parses differently:\n" + printed);
    } catch (CommandLineConfig.ConfigException e) {
      assertTrue(e.getMessage().matches("(?s)fuzz\\.pbtxt:-?\\d+:-?\\d+: error: .*"),
          () -> "text error does not say where: " + e.getMessage());
    }
    try {
      CommandLineConfig.parse(raw, "fuzz.cfg", false, false);
    } catch (CommandLineConfig.ConfigException e) {
      assertTrue(e.getMessage().startsWith("The trace config is invalid"), e::getMessage);
    }
  }
}
