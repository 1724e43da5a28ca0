package org.jperfetto.service;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jperfetto.protos.TraceConfig;

/** The checks EnableTracing makes on a TraceConfig before anything is created. */
final class SessionConfigCheck {
  private SessionConfigCheck() {}

  /** null if the config can be traced, else why not (upstream's wording where it has one). */
  static String check(TraceConfig cfg, boolean hasFileSink) {
    if (cfg.getBuffersCount() == 0) {
      return "TraceConfig has no buffers";
    }
    if (cfg.getBuffersCount() > ServiceLimits.MAX_BUFFERS_PER_SESSION) {
      return "Too many buffers configured (" + cfg.getBuffersCount() + ")";
    }
    for (int i = 0; i < cfg.getBuffersCount(); i++) {
      long sizeKb = Integer.toUnsignedLong(cfg.getBuffers(i).getSizeKb());
      if (sizeKb == 0 || sizeKb % 4 != 0 || sizeKb * 1024 > 0xFFFF_FFFFL) {
        return "buffers.size_kb must be a positive multiple of 4 below 4 GiB, got " + sizeKb
            + " for buffer " + i;
      }
    }
    if (Integer.toUnsignedLong(cfg.getDurationMs()) > ServiceLimits.MAX_DURATION_MS) {
      return "Requested too long trace (" + Integer.toUnsignedLong(cfg.getDurationMs()) + "ms > "
          + ServiceLimits.MAX_DURATION_MS + " ms)";
    }
    TraceConfig.TriggerConfig triggers = cfg.getTriggerConfig();
    TraceConfig.TriggerConfig.TriggerMode mode = triggers.getTriggerMode();
    boolean hasTriggers = mode != TraceConfig.TriggerConfig.TriggerMode.UNSPECIFIED;
    long timeout = Integer.toUnsignedLong(triggers.getTriggerTimeoutMs());
    if (hasTriggers && (timeout == 0 || timeout > ServiceLimits.MAX_DURATION_MS)) {
      return "Traces with START_TRACING triggers must provide a positive trigger_timeout_ms < 7 days"
          + " (received " + timeout + "ms)";
    }
    if (triggers.getUseCloneSnapshotIfAvailable()
        && mode != TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING) {
      return "trigger_mode must be STOP_TRACING when use_clone_snapshot_if_available=true";
    }
    if (hasTriggers && cfg.getDurationMs() != 0) {
      return "duration_ms was set, this must not be set for traces with triggers.";
    }
    if ((mode == TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING
        || mode == TraceConfig.TriggerConfig.TriggerMode.CLONE_SNAPSHOT) && cfg.getWriteIntoFile()) {
      return "Specifying trigger mode STOP_TRACING/CLONE_SNAPSHOT and write_into_file together is"
          + " unsupported";
    }
    java.util.Set<String> names = new java.util.HashSet<>();
    for (TraceConfig.TriggerConfig.Trigger t : triggers.getTriggersList()) {
      if (!names.add(t.getName())) {
        return "Duplicate trigger name: " + t.getName();
      }
      try {
        Pattern.compile(t.getProducerNameRegex());
      } catch (PatternSyntaxException e) {
        return "Trigger \"" + t.getName() + "\": invalid producer_name_regex \""
            + t.getProducerNameRegex() + "\": " + e.getDescription();
      }
    }
    if (cfg.getWriteIntoFile() != hasFileSink) {
      return cfg.getWriteIntoFile()
          ? "When write_into_file==true a FD needs to be passed (output_path is not supported)"
          : "A trace file was passed but the config does not set write_into_file";
    }
    for (TraceConfig.DataSource ds : cfg.getDataSourcesList()) {
      String name = ds.getConfig().getName();
      if (!ds.getConfig().getTargetBufferName().isEmpty()) {
        return "Data source \"" + name + "\": target_buffer_name is not supported yet";
      }
      int target = ds.getConfig().getTargetBuffer();
      if (Integer.compareUnsigned(target, cfg.getBuffersCount()) >= 0) {
        return "Data source \"" + name + "\" specified an out of bounds target_buffer ("
            + Integer.toUnsignedString(target) + " >= " + cfg.getBuffersCount() + ")";
      }
      for (String regex : ds.getProducerNameRegexFilterList()) {
        try {
          Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
          return "Data source \"" + name + "\": invalid producer_name_regex_filter \"" + regex
              + "\": " + e.getDescription();
        }
      }
    }
    return null;
  }
}
