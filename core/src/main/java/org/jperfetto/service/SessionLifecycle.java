package org.jperfetto.service;

import java.util.Optional;
import java.util.UUID;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceConfig.TriggerConfig.TriggerMode;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceEvent;
import org.jperfetto.service.buffer.OverwritePolicy;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * A tracing session's life, on the service thread: enabled (its buffers made, its instances set
 * up), started (its timers armed), stopped (its instances told, their acks awaited, a last drain
 * into its file) and freed (its buffers closed). Its data source instances are
 * {@link DataSources}', made here because a stopping session hears from them when the last one
 * stopped.
 */
final class SessionLifecycle {
  private static final System.Logger LOG = System.getLogger(SessionLifecycle.class.getName());

  private final ServiceState state;
  private final SessionTasks tasks;
  private final ClockSource clocks;
  private final Flushes flushes;
  private final SessionReader reader;
  private final DataSources dataSources;
  private final PeriodicTasks periodicTasks;

  SessionLifecycle(ServiceState state, SessionTasks tasks, ClockSource clocks, Flushes flushes,
      SessionReader reader, ServiceQueries counters, SharedMemory.Factory shmFactory) {
    this.state = state;
    this.tasks = tasks;
    this.clocks = clocks;
    this.flushes = flushes;
    this.reader = reader;
    this.dataSources = new DataSources(state, counters, flushes, shmFactory, clocks, this::maybeFinishDisable);
    this.periodicTasks = new PeriodicTasks(state, tasks, flushes, this::drainIntoFile);
  }

  DataSources dataSources() {
    return dataSources;
  }

  /** EnableTracing from consumer c: "" once the session is set up (and started unless it waits), or why not. */
  @SuppressWarnings("deprecation") // trace_uuid_msb/lsb: deprecated upstream, still what perfetto sends
  String enableTracing(ConsumerConnection c, TraceConfig cfg, Optional<ConsumerEndpoint.TraceFileSink> fileSink) {
    String refused = refusal(c, cfg, fileSink.isPresent());
    if (refused != null) {
      return refused;
    }
    int[] ids = new int[cfg.getBuffersCount()];
    for (int i = 0; i < ids.length; i++) {
      TraceConfig.BufferConfig b = cfg.getBuffers(i);
      long bytes = b.getSizeKb() * 1024L;
      TraceBuffer buffer;
      try {
        buffer = TraceBuffer.create(bytes, b.getFillPolicy() == TraceConfig.BufferConfig.FillPolicy.DISCARD
            ? OverwritePolicy.DISCARD : OverwritePolicy.RING_BUFFER, state.bufferMemory());
      } catch (RuntimeException | OutOfMemoryError e) {
        for (int j = 0; j < i; j++) {
          state.removeBuffer(ids[j]).close();
        }
        LOG.log(System.Logger.Level.WARNING, "refusing a session: trace buffer " + i + " of " + b.getSizeKb()
            + " KB cannot be allocated: " + e);
        return "Failed to allocate trace buffer " + i + " (" + b.getSizeKb() + " KB): " + e.getMessage();
      }
      ids[i] = state.addBuffer(buffer);
    }
    UUID uuid = cfg.getTraceUuidMsb() != 0 || cfg.getTraceUuidLsb() != 0
        ? new UUID(cfg.getTraceUuidMsb(), cfg.getTraceUuidLsb()) : UUID.randomUUID();
    ServiceSession s = state.newSession(c, cfg, ids, uuid);
    s.fileSink = fileSink.orElse(null);
    state.applyLockdown(cfg.getLockdownMode());
    dataSources.setUpInstances(s, false);
    if (s.triggerMode() == TriggerMode.START_TRACING) {
      armStartTimeout(s);
    } else if (!cfg.getDeferredStart()) {
      startTracing(s);
    }
    return "";
  }

  /** Why consumer c may not have a session of config cfg, or null. */
  private String refusal(ConsumerConnection c, TraceConfig cfg, boolean intoFile) {
    if (c.session != null) {
      return "the consumer is already tracing: session=" + c.session.id;
    }
    String error = SessionConfigCheck.check(cfg, intoFile);
    if (error != null) {
      return error;
    }
    if (!cfg.getUniqueSessionName().isEmpty() && state.sessionNamed(cfg.getUniqueSessionName()) != null) {
      return "A trace with this unique session name (" + cfg.getUniqueSessionName() + ") already exists";
    }
    int ofUid = state.sessionsOfUid(c.uid);
    if (ofUid >= ServiceLimits.MAX_SESSIONS_PER_UID) {
      return "Too many concurrent tracing sessions (" + ofUid + ") for uid " + c.uid + " limit is "
          + ServiceLimits.MAX_SESSIONS_PER_UID;
    }
    if (state.sessionCount() >= ServiceLimits.MAX_SESSIONS) {
      return "Too many concurrent tracing sessions (" + state.sessionCount() + ")";
    }
    if (!state.hasIdsForBuffers(cfg.getBuffersCount())) {
      return "Too many trace buffers in the service: buffers=" + state.bufferCount();
    }
    return BufferBudget.check(state.maxBufferBytes(), state.buffers(), cfg);
  }

  /** A configured session starts: its instances, its snapshots, its periodic tasks and its timers. */
  void startTracing(ServiceSession s) {
    if (s.state != ServiceSession.State.CONFIGURED) {
      return;
    }
    s.state = ServiceSession.State.STARTED;
    s.clockSnapshots.add(clocks.snapshot());
    s.addLifecycleEvent(TracingServiceEvent.TRACING_STARTED_FIELD_NUMBER, clocks.now());
    dataSources.startInstances(s);
    if (s.state == ServiceSession.State.STARTED) { // a callback above may have stopped it
      periodicSnapshot(s, true);
    }
    periodicTasks.start(s);
    armStopTimeout(s);
    if (s.config.getDurationMs() > 0) {
      s.durationTimer = tasks.after(s.config.getDurationMs(), s,
          SessionTasks.in(ServiceSession.State.STARTED), this::flushAndDisable);
    }
  }

  /** A START_TRACING session just configured: it ends if no trigger comes in trigger_timeout_ms. */
  private void armStartTimeout(ServiceSession s) {
    s.triggerTimer = tasks.after(triggerTimeoutMs(s), s, SessionTasks.in(ServiceSession.State.CONFIGURED),
        live -> {
          LOG.log(System.Logger.Level.INFO, "session {0}: no START_TRACING trigger in {1} ms",
              live.id, live.config.getTriggerConfig().getTriggerTimeoutMs());
          disableTracing(live);
        });
  }

  /** A session just started: STOP_TRACING and CLONE_SNAPSHOT ones end if no trigger comes in time. */
  private void armStopTimeout(ServiceSession s) {
    TriggerMode mode = s.triggerMode();
    if (mode == TriggerMode.STOP_TRACING || mode == TriggerMode.CLONE_SNAPSHOT) {
      s.triggerTimer = tasks.after(triggerTimeoutMs(s), s,
          live -> live.state == ServiceSession.State.STARTED && live.receivedTriggers.isEmpty(),
          this::flushAndDisable);
    }
  }

  private static long triggerTimeoutMs(ServiceSession s) {
    return Integer.toUnsignedLong(s.config.getTriggerConfig().getTriggerTimeoutMs());
  }

  /** The end of a traced session by time or trigger: a last flush, then the stop. */
  void flushAndDisable(ServiceSession s) {
    flushes.flush(s, 0, ServiceFlushFlags.TRACE_STOP, ok -> {
      // kept for TraceStats.final_flush_outcome, as traced does
      s.finalFlushOutcome = ok ? TraceStats.FinalFlushOutcome.FINAL_FLUSH_SUCCEEDED
          : TraceStats.FinalFlushOutcome.FINAL_FLUSH_FAILED;
      disableTracing(s);
    });
  }

  /** Sync marker, clock snapshot and stats every snapshot_interval_ms while tracing. */
  private void periodicSnapshot(ServiceSession s, boolean first) {
    s.shouldEmitSyncMarker = true;
    s.shouldEmitStats = true;
    if (!first) {
      s.clockSnapshots.add(clocks.snapshot()); // the first was taken at start
    }
    int interval = s.config.getBuiltinDataSources().getSnapshotIntervalMs();
    tasks.after(interval > 0 ? interval : ServiceLimits.DEFAULT_SNAPSHOT_INTERVAL_MS, s,
        SessionTasks.in(ServiceSession.State.STARTED), live -> periodicSnapshot(live, false));
  }

  /** write_into_file: drains s into its file, and stops s once the file takes no more. */
  void drainIntoFile(ServiceSession s) {
    if (reader.drainIntoFile(s)) {
      disableTracing(s);
    }
  }

  /** DisableTracing: the instances are told to stop; the session is stopped once they acked (or timed out). */
  void disableTracing(ServiceSession s) {
    switch (s.state) {
      case CONFIGURED -> {
        finishDisable(s); // never started: nothing to stop
        return;
      }
      case STARTED -> { }
      case CLONED_READ_ONLY -> {
        if (s.consumer != null) {
          s.consumer.callbacks.onTracingDisabled(""); // a snapshot: nothing runs
        }
        return;
      }
      default -> {
        return;
      }
    }
    SessionTasks.cancel(s.durationTimer);
    s.state = ServiceSession.State.DISABLING_WAITING_STOP_ACKS;
    dataSources.stopInstances(s);
    s.stopTimer = tasks.after(s.dataSourceStopTimeoutMs(), s,
        SessionTasks.in(ServiceSession.State.DISABLING_WAITING_STOP_ACKS), live -> {
          LOG.log(System.Logger.Level.INFO, "session {0}: data sources did not ack the stop in {1} ms",
              live.id, live.dataSourceStopTimeoutMs());
          finishDisable(live);
        });
    maybeFinishDisable(s);
  }

  private void maybeFinishDisable(ServiceSession s) {
    if (!DataSources.anyStopping(s)) {
      finishDisable(s);
    }
  }

  private void finishDisable(ServiceSession s) {
    SessionTasks.cancel(s.stopTimer);
    SessionTasks.cancel(s.triggerTimer);
    SessionTasks.cancel(s.durationTimer);
    flushes.scrapeProducersOf(s);
    boolean wasStarted = s.state != ServiceSession.State.CONFIGURED;
    s.state = ServiceSession.State.DISABLED;
    if (wasStarted) {
      s.clockSnapshots.add(clocks.snapshot());
    }
    s.addLifecycleEvent(TracingServiceEvent.TRACING_DISABLED_FIELD_NUMBER, clocks.now());
    s.shouldEmitStats = true;
    for (int id : s.bufferIds) {
      // No more data can come: stop accepting chunks (late commits are discarded).
      state.buffer(id).setReadOnly();
    }
    if (s.fileSink != null) {
      reader.drainIntoFile(s); // the last drain; the session is stopped already
      s.fileSink = null;
    }
    if (s.consumer != null) {
      s.consumer.callbacks.onTracingDisabled(s.fileWriteError == null ? "" : s.fileWriteError);
    }
  }

  /** Ends a session and frees its buffers (FreeBuffers, consumer disconnect). */
  void freeSession(ServiceSession s) {
    dataSources.releaseInstances(s);
    SessionTasks.cancel(s.durationTimer);
    SessionTasks.cancel(s.stopTimer);
    SessionTasks.cancel(s.triggerTimer);
    Flushes.cancelAll(s);
    dataSources.forgetInstances(s);
    for (int id : s.bufferIds) {
      TraceBuffer b = state.removeBuffer(id);
      if (b != null) {
        b.close();
      }
    }
    s.readCursor = null; // a read in progress ends with the session
    s.state = ServiceSession.State.DISABLED;
    state.removeSession(s);
    if (s.consumer != null && s.consumer.session == s) {
      s.consumer.session = null;
    }
  }
}
