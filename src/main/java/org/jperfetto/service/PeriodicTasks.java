package org.jperfetto.service;

import java.util.function.Consumer;

/**
 * The timers a started session runs while it traces: write_into_file drains
 * (file_write_period_ms), periodic flushes (flush_period_ms) and incremental state clears
 * (incremental_state_config.clear_period_ms). Each re-arms itself while the session is STARTED.
 */
final class PeriodicTasks {
  private PeriodicTasks() {}

  static void start(TracingService service, TracingSession s) {
    if (s.fileSink != null) {
      long period = s.config.getFileWritePeriodMs() == 0 ? TracingService.DEFAULT_FILE_WRITE_PERIOD_MS
          : Math.max(TracingService.MIN_FILE_WRITE_PERIOD_MS,
              Integer.toUnsignedLong(s.config.getFileWritePeriodMs()));
      every(service, s.id, period, service::drainIntoFile);
    }
    long flushPeriod = Integer.toUnsignedLong(s.config.getFlushPeriodMs());
    if (flushPeriod > 0) {
      every(service, s.id, Math.max(TracingService.MIN_PERIODIC_TASK_MS, flushPeriod),
          live -> service.flush(live, 0, ok -> { }));
    }
    long clearPeriod = Integer.toUnsignedLong(s.config.getIncrementalStateConfig().getClearPeriodMs());
    if (clearPeriod > 0) {
      every(service, s.id, Math.max(TracingService.MIN_PERIODIC_TASK_MS, clearPeriod),
          service::clearIncrementalState);
    }
  }

  private static void every(TracingService service, long sessionId, long periodMs,
      Consumer<TracingSession> task) {
    service.taskRunner().postDelayed(() -> {
      TracingSession live = service.liveSession(sessionId);
      if (live != null && live.state == TracingSession.State.STARTED) {
        task.accept(live);
        every(service, sessionId, periodMs, task);
      }
    }, periodMs);
  }
}
