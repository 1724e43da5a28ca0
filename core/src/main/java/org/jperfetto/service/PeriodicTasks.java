package org.jperfetto.service;

import java.util.function.Consumer;
import org.jperfetto.protos.TraceConfig;

/**
 * The timers a started session runs while it traces: write_into_file drains
 * (file_write_period_ms), periodic flushes (flush_period_ms) and incremental state clears
 * (incremental_state_config.clear_period_ms, or the service's default for a ring buffer: see
 * {@link ClearPeriod}). Each re-arms itself while the session is STARTED.
 *
 * <p>Flushes of a write_into_file session follow write_flush_mode as upstream: AUTO (or unset)
 * flushes every 5 s when the file period is at most 5 s, else before every drain, and ignores
 * flush_period_ms; ENABLED flushes before every drain; DISABLED uses flush_period_ms.
 */
final class PeriodicTasks {
  private PeriodicTasks() {}

  static void start(TracingService service, TracingSession s) {
    long flushPeriod = Integer.toUnsignedLong(s.config.getFlushPeriodMs());
    if (s.fileSink != null) {
      long period = s.config.getFileWritePeriodMs() == 0 ? TracingService.DEFAULT_FILE_WRITE_PERIOD_MS
          : Math.max(TracingService.MIN_FILE_WRITE_PERIOD_MS,
              Integer.toUnsignedLong(s.config.getFileWritePeriodMs()));
      TraceConfig.WriteFlushMode mode = s.config.getWriteFlushMode();
      boolean auto = mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_AUTO
          || mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_UNSPECIFIED;
      boolean flushOnWrite = mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_ENABLED
          || auto && period > TracingService.DEFAULT_FILE_WRITE_PERIOD_MS;
      if (auto || flushOnWrite) {
        flushPeriod = flushOnWrite ? 0 : TracingService.DEFAULT_FILE_WRITE_PERIOD_MS;
      }
      every(service, s, period, flushOnWrite
          ? live -> service.flush(live, 0, ServiceFlushFlags.PERIODIC, ok -> drainIfLive(service, live))
          : service.reader()::drainIntoFile);
    }
    if (flushPeriod > 0) {
      every(service, s, Math.max(TracingService.MIN_PERIODIC_TASK_MS, flushPeriod),
          live -> service.flush(live, 0, ServiceFlushFlags.PERIODIC, ok -> { }));
    }
    long clearPeriod = ClearPeriod.effectiveMs(s.config, service.defaultClearPeriodMs());
    if (clearPeriod > 0) {
      every(service, s, Math.max(TracingService.MIN_PERIODIC_TASK_MS, clearPeriod),
          service::clearIncrementalState);
    }
  }

  /** After a flush's answer: the drain, if the session still traces. */
  private static void drainIfLive(TracingService service, TracingSession s) {
    service.sessionTasks().runIfLive(s.id, SessionTasks.in(TracingSession.State.STARTED),
        service.reader()::drainIntoFile);
  }

  private static void every(TracingService service, TracingSession s, long periodMs,
      Consumer<TracingSession> task) {
    service.sessionTasks().after(periodMs, s, SessionTasks.in(TracingSession.State.STARTED), live -> {
      task.accept(live);
      every(service, live, periodMs, task);
    });
  }
}
