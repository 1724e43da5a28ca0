package org.jperfetto.service;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
  private final ServiceState state;
  private final SessionTasks tasks;
  private final Flushes flushes;
  private final Consumer<ServiceSession> drainIntoFile;

  /** @param drainIntoFile drains a write_into_file session into its file (and stops it once full) */
  PeriodicTasks(ServiceState state, SessionTasks tasks, Flushes flushes, Consumer<ServiceSession> drainIntoFile) {
    this.state = state;
    this.tasks = tasks;
    this.flushes = flushes;
    this.drainIntoFile = drainIntoFile;
  }

  /** Session s just started: arms its drains, flushes and clears. */
  void start(ServiceSession s) {
    long flushPeriod = Integer.toUnsignedLong(s.config.getFlushPeriodMs());
    if (s.fileSink != null) {
      long period = s.config.getFileWritePeriodMs() == 0 ? ServiceLimits.DEFAULT_FILE_WRITE_PERIOD_MS
          : Math.max(ServiceLimits.MIN_FILE_WRITE_PERIOD_MS,
              Integer.toUnsignedLong(s.config.getFileWritePeriodMs()));
      TraceConfig.WriteFlushMode mode = s.config.getWriteFlushMode();
      boolean auto = mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_AUTO
          || mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_UNSPECIFIED;
      boolean flushOnWrite = mode == TraceConfig.WriteFlushMode.WRITE_FLUSH_ENABLED
          || auto && period > ServiceLimits.DEFAULT_FILE_WRITE_PERIOD_MS;
      if (auto || flushOnWrite) {
        flushPeriod = flushOnWrite ? 0 : ServiceLimits.DEFAULT_FILE_WRITE_PERIOD_MS;
      }
      every(s, period, flushOnWrite
          ? live -> flushes.flush(live, 0, ServiceFlushFlags.PERIODIC, ok -> drainIfLive(live))
          : drainIntoFile);
    }
    if (flushPeriod > 0) {
      every(s, Math.max(ServiceLimits.MIN_PERIODIC_TASK_MS, flushPeriod),
          live -> flushes.flush(live, 0, ServiceFlushFlags.PERIODIC, ok -> { }));
    }
    long clearPeriod = ClearPeriod.effectiveMs(s.config, state.defaultClearPeriodMs());
    if (clearPeriod > 0) {
      every(s, Math.max(ServiceLimits.MIN_PERIODIC_TASK_MS, clearPeriod), this::clearIncrementalState);
    }
  }

  /** After a flush's answer: the drain, if the session still traces. */
  private void drainIfLive(ServiceSession s) {
    tasks.runIfLive(s.id, SessionTasks.in(ServiceSession.State.STARTED), drainIntoFile);
  }

  private void every(ServiceSession s, long periodMs, Consumer<ServiceSession> task) {
    tasks.after(periodMs, s, SessionTasks.in(ServiceSession.State.STARTED), live -> {
      task.accept(live);
      every(live, periodMs, task);
    });
  }

  /** clear_incremental_state to every producer with instances that handle it. */
  private void clearIncrementalState(ServiceSession s) {
    Map<Integer, List<Long>> byProducer = new TreeMap<>();
    for (SessionDataSource inst : s.instances) {
      if (inst.descriptor.getHandlesIncrementalStateClear()
          && inst.state == SessionDataSource.State.STARTED) {
        byProducer.computeIfAbsent(inst.producerId, k -> new ArrayList<>()).add(inst.instanceId);
      }
    }
    for (Map.Entry<Integer, List<Long>> e : byProducer.entrySet()) {
      state.producer(e.getKey()).callbacks.clearIncrementalState(
          e.getValue().stream().mapToLong(Long::longValue).toArray());
    }
  }
}
