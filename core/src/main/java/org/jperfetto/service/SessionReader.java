package org.jperfetto.service;

import java.util.List;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceProvenance;
import org.jperfetto.protos.TracingServiceEvent;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * Reading a session out, on the service thread: the service's own packets (clock snapshots, sync
 * marker, trace config, uuid, provenance, system info, lifecycle events, triggers, stats) and the
 * producers' packets from the session's buffers, to the consumer (ReadBuffers) or, for
 * write_into_file, into the file. Reads are destructive: what was handed out is not read again.
 */
final class SessionReader {
  private static final System.Logger LOG = System.getLogger(SessionReader.class.getName());

  private final ServiceState state;
  private final ServicePackets servicePackets;
  private final ClockSource clocks;
  private final ServiceQueries queries;
  private final RemoteMachines remoteMachines;
  private final BufferedPacket readPacket = new BufferedPacket();

  SessionReader(ServiceState state, ServicePackets servicePackets, ClockSource clocks, ServiceQueries queries,
      RemoteMachines remoteMachines) {
    this.state = state;
    this.servicePackets = servicePackets;
    this.clocks = clocks;
    this.queries = queries;
    this.remoteMachines = remoteMachines;
  }

  /**
   * ReadBuffers from the session's consumer: starts a read (replacing one in progress) and hands
   * out batches while the consumer is {@link ConsumerCallbacks#readyForTraceData ready} for them;
   * the rest waits for {@link #resumeReadBuffers}.
   */
  void readBuffers(ServiceSession s) {
    if (s.consumer == null) {
      return;
    }
    s.readCursor = null;
    if (s.fileSink != null) {
      // Its data goes into the file; a ReadBuffers gets an empty answer, as upstream's does.
      s.consumer.callbacks.onTraceData(List.of(), false);
      return;
    }
    if (isHeldBack(s)) {
      s.consumer.callbacks.onTraceData(List.of(), false);
      return;
    }
    s.readCursor = newCursor(s, s.consumer.callbacks::onTraceData);
    resumeReadBuffers(s);
  }

  /** Goes on with the session's read in progress, if any, while its consumer is ready. */
  void resumeReadBuffers(ServiceSession s) {
    SessionReadCursor cursor = s.readCursor;
    while (cursor != null && s.readCursor == cursor && s.consumer != null
        && s.consumer.callbacks.readyForTraceData()) {
      if (!step(cursor)) {
        if (s.readCursor == cursor) {
          s.readCursor = null;
        }
        return;
      }
    }
  }

  /**
   * write_into_file: drains the buffers into the file.
   *
   * @return true once the file takes no more (full, or writing failed: see fileWriteError): the
   *     session has no file any more and must stop
   */
  boolean drainIntoFile(ServiceSession s) {
    if (s.fileSink == null) {
      return false;
    }
    TraceFileDrain drain = new TraceFileDrain(s.fileSink, s.bytesWrittenIntoFile,
        s.config.getMaxFileSizeBytes());
    if (isHeldBack(s)) {
      drain.onTraceData(List.of(), false);
    } else {
      SessionReadCursor cursor = newCursor(s, drain);
      while (step(cursor)) {
        // the file takes every batch as it comes
      }
    }
    drain.finish();
    s.bytesWrittenIntoFile = drain.bytesWritten();
    if (drain.stopped()) {
      if (drain.failure() != null) {
        s.fileWriteError = drain.failure();
        LOG.log(System.Logger.Level.WARNING, "session " + s.id + ": " + drain.failure());
      } else {
        LOG.log(System.Logger.Level.INFO, "session {0}: trace file full ({1} bytes written)", s.id,
            s.bytesWrittenIntoFile);
      }
      s.fileSink = null;
      return true;
    }
    return false;
  }

  /** Nothing is handed out before the trigger that starts (or, cloned aside, stops) the session. */
  private static boolean isHeldBack(ServiceSession s) {
    boolean cloned = s.state == ServiceSession.State.CLONED_READ_ONLY;
    return !cloned && s.isWaitingForStopTrigger() || s.state == ServiceSession.State.CONFIGURED
        && s.triggerMode() == TraceConfig.TriggerConfig.TriggerMode.START_TRACING;
  }

  private SessionReadCursor newCursor(ServiceSession s, SliceSink sink) {
    return new SessionReadCursor(s, s.isCompressed() ? new DeflatingSink(sink, servicePackets) : sink);
  }

  /**
   * Moves the next batch of the session's service packets and buffer contents (destructively) into
   * the cursor's sink; false once that was the last batch.
   */
  private boolean step(SessionReadCursor c) {
    if (c.finished) {
      return false;
    }
    ServiceSession s = c.session;
    SliceBatch batch = c.batch;
    if (!c.headDone) {
      addHeadPackets(s, batch);
      c.headDone = true;
    }
    for (; c.bufferIndex < s.bufferIds.length; c.bufferIndex++, c.bufferBegun = false) {
      TraceBuffer buf = state.buffer(s.bufferIds[c.bufferIndex]);
      if (buf == null) {
        continue; // freed under a paused read
      }
      if (!c.bufferBegun) {
        buf.beginRead();
        c.bufferBegun = true;
      }
      while (buf.readNextTracePacket(readPacket)) {
        if (!PacketValidator.validate(readPacket)) {
          s.invalidPackets++;
          continue;
        }
        batch.addProducerPacket(readPacket, readPacket.uid(), readPacket.pid(),
            s.sequenceIdFor(readPacket.producerId(), readPacket.writerId()));
        if (batch.bytes() >= ServiceLimits.READ_BATCH_BYTES) {
          c.out.onTraceData(batch.take(), true);
          return true;
        }
      }
    }
    addTailPackets(s, batch);
    c.finished = true;
    c.out.onTraceData(batch.take(), false);
    return false;
  }

  /** The service's packets ahead of the buffers' contents. */
  private void addHeadPackets(ServiceSession s, SliceBatch batch) {
    BuiltinDataSources builtin = new BuiltinDataSources(s.config.getBuiltinDataSources());
    for (List<ClockSource.Reading> snapshot : s.clockSnapshots) {
      if (!builtin.disableClockSnapshotting) {
        batch.addPacket(servicePackets.clockSnapshot(snapshot));
      }
    }
    s.clockSnapshots.clear();
    if (s.shouldEmitSyncMarker) {
      batch.addPacket(servicePackets.syncMarker());
      s.shouldEmitSyncMarker = false;
    }
    if (!builtin.disableTraceConfig && !s.didEmitTraceConfig) {
      batch.addPacket(servicePackets.traceConfig(s.config));
      s.didEmitTraceConfig = true;
    }
    if (!s.didEmitInitialPackets) {
      batch.addPacket(servicePackets.traceUuid(s.uuidMsb, s.uuidLsb));
      batch.addPacket(servicePackets.traceProvenance(provenance(s)));
      if (!builtin.disableSystemInfo) {
        batch.addPacket(servicePackets.systemInfo());
        remoteMachines.systemInfoPackets(servicePackets.serviceUid()).forEach(batch::addPacket);
      }
      s.didEmitInitialPackets = true;
    }
    if (!builtin.disableClockSnapshotting && !s.didEmitRemoteClockSync && !remoteMachines.isEmpty()) {
      remoteMachines.clockSyncPackets(servicePackets.serviceUid()).forEach(batch::addPacket);
      s.didEmitRemoteClockSync = true;
    }
    if (!builtin.disableServiceEvents) {
      emitLifecycleEvents(s, batch);
    }
    for (; s.triggersEmitted < s.receivedTriggers.size(); s.triggersEmitted++) {
      batch.addPacket(servicePackets.trigger(s.receivedTriggers.get(s.triggersEmitted)));
    }
  }

  /** The service's packets after the buffers' contents. */
  private void addTailPackets(ServiceSession s, SliceBatch batch) {
    if (!s.config.getBuiltinDataSources().getDisableServiceEvents()) {
      s.addLifecycleEvent(TracingServiceEvent.READ_TRACING_BUFFERS_COMPLETED_FIELD_NUMBER, clocks.now());
      emitLifecycleEvents(s, batch);
    }
    if (s.shouldEmitStats) {
      batch.addPacket(servicePackets.traceStats(queries.traceStats(s)));
      s.shouldEmitStats = false;
    }
  }

  /** Per buffer of the session, the sequences (trusted id, producer) that have written into it. */
  private TraceProvenance provenance(ServiceSession s) {
    TraceProvenance.Builder p = TraceProvenance.newBuilder();
    for (int id : s.bufferIds) {
      TraceProvenance.Buffer.Builder b = p.addBuffersBuilder();
      TraceBuffer buf = state.buffer(id);
      if (buf != null) {
        buf.forEachWriter((producer, writer) -> b.addSequences(TraceProvenance.Sequence
            .newBuilder().setId(s.sequenceIdFor(producer, writer)).setProducerId(producer)));
      }
    }
    return p.build();
  }

  private void emitLifecycleEvents(ServiceSession s, SliceBatch batch) {
    for (ServiceSession.LifecycleEvent e : s.lifecycleEvents) {
      batch.addPacket(servicePackets.lifecycleEvent(e));
    }
    s.lifecycleEvents.clear();
  }

  /** The builtin_data_sources switches of a config. */
  private record BuiltinDataSources(boolean disableClockSnapshotting, boolean disableTraceConfig,
      boolean disableSystemInfo, boolean disableServiceEvents) {
    BuiltinDataSources(TraceConfig.BuiltinDataSource b) {
      this(b.getDisableClockSnapshotting(), b.getDisableTraceConfig(), b.getDisableSystemInfo(),
          b.getDisableServiceEvents());
    }
  }
}
