package org.jperfetto.service;

import org.jperfetto.protos.TraceConfig;

/**
 * How often a session clears its data sources' incremental state
 * (incremental_state_config.clear_period_ms), and the default jperfetto uses.
 *
 * <p>A ring buffer that wraps overwrites the packets that defined each sequence's interned names,
 * track descriptors and clock: trace_processor then reads none of the packets that depend on them.
 * A periodic clear makes every sequence start a fresh incremental state, so everything written after
 * the first clear still in the ring is readable. Upstream's traced clears only when the config asks;
 * jtraced also clears, every {@link #DEFAULT_MS}, the sessions that have a ring buffer and give no
 * clear period of their own (switch off per session with an explicit {@code clear_period_ms: 0}, or
 * for the whole service with jtraced {@code --default-clear-period=0}). docs/flight-recorder.md has
 * the measurements behind {@link #DEFAULT_MS}.
 */
public final class ClearPeriod {
  /** The clear period jperfetto's own configs set, and jtraced's default for ring-buffer sessions. */
  public static final int DEFAULT_MS = 1000;

  private ClearPeriod() {}

  /** Whether config asks for a clear period itself (0 included: "never clear"). */
  public static boolean isExplicit(TraceConfig config) {
    return config.hasIncrementalStateConfig() && config.getIncrementalStateConfig().hasClearPeriodMs();
  }

  /** Whether one of config's buffers overwrites its oldest data when full (unset counts, as upstream). */
  public static boolean hasRingBuffer(TraceConfig config) {
    for (TraceConfig.BufferConfig b : config.getBuffersList()) {
      if (b.getFillPolicy() != TraceConfig.BufferConfig.FillPolicy.DISCARD) {
        return true;
      }
    }
    return false;
  }

  /** Whether a session of config may lose every readable slice once its ring wraps. */
  public static boolean wrapsUnreadable(TraceConfig config) {
    return hasRingBuffer(config) && !isExplicit(config);
  }

  /**
   * The period in ms a session of config clears at (0: never): the config's own, else
   * serviceDefaultMs when it has a ring buffer, else 0.
   */
  public static long effectiveMs(TraceConfig config, int serviceDefaultMs) {
    if (isExplicit(config)) {
      return Integer.toUnsignedLong(config.getIncrementalStateConfig().getClearPeriodMs());
    }
    return hasRingBuffer(config) ? serviceDefaultMs : 0;
  }
}
