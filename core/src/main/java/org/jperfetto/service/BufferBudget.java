package org.jperfetto.service;

import java.util.Collection;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * The service-wide cap on trace buffer memory: the sizes of all sessions' buffers (clones
 * included) together may not pass it, so a few large sessions cannot take the machine's memory.
 * Buffers are committed as data arrives, so the cap bounds what sessions may grow to, not what
 * they hold at first. Upstream traced has no such cap (only per-session guardrails).
 */
final class BufferBudget {
  private BufferBudget() {}

  /** null if {@code cfg}'s buffers fit next to {@code existing} within {@code maxBytes}, else why not. */
  static String check(long maxBytes, Collection<TraceBuffer> existing, TraceConfig cfg) {
    long inUse = 0;
    for (TraceBuffer b : existing) {
      inUse += b.size();
    }
    long requested = 0;
    for (TraceConfig.BufferConfig b : cfg.getBuffersList()) {
      requested += Integer.toUnsignedLong(b.getSizeKb()) * 1024;
    }
    if (requested <= maxBytes - inUse) {
      return null;
    }
    return "Trace buffers of " + requested / 1024 + " KB exceed the service's buffer memory budget: "
        + inUse / 1024 + " KB of " + maxBytes / 1024 + " KB are in use by other sessions"
        + " (jtraced --max-buffer-memory)";
  }
}
