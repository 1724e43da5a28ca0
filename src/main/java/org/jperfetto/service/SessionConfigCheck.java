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
    if (cfg.getBuffersCount() > TracingService.MAX_BUFFERS_PER_SESSION) {
      return "Too many buffers configured (" + cfg.getBuffersCount() + ")";
    }
    for (int i = 0; i < cfg.getBuffersCount(); i++) {
      long sizeKb = Integer.toUnsignedLong(cfg.getBuffers(i).getSizeKb());
      if (sizeKb == 0 || sizeKb % 4 != 0 || sizeKb * 1024 > 0xFFFF_FFFFL) {
        return "buffers.size_kb must be a positive multiple of 4 below 4 GiB, got " + sizeKb
            + " for buffer " + i;
      }
    }
    if (Integer.toUnsignedLong(cfg.getDurationMs()) > TracingService.MAX_DURATION_MS) {
      return "Requested too long trace (" + Integer.toUnsignedLong(cfg.getDurationMs()) + "ms > "
          + TracingService.MAX_DURATION_MS + " ms)";
    }
    if (cfg.getWriteIntoFile() || hasFileSink) {
      return "write_into_file is not supported by this service yet";
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
