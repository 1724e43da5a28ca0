package org.jperfetto.service;

import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TracingServiceCapabilities;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * What a consumer may ask about the service, on the service thread: QueryServiceState,
 * QueryCapabilities and GetTraceStats (also the stats packets of a trace), with the service-wide
 * counters behind them.
 */
final class ServiceQueries {
  private final ServiceState state;

  private long producersSeen;
  private long dataSourcesSeen;
  private long chunksDiscarded;
  private long patchesDiscarded;
  private long abiViolations;
  private long dataSourcesRefused;

  ServiceQueries(ServiceState state) {
    this.state = state;
  }

  void countProducerConnected() {
    producersSeen++;
  }

  void countDataSourceRegistered() {
    dataSourcesSeen++;
  }

  void countDiscardedChunk() {
    chunksDiscarded++;
  }

  void countDiscardedPatches(int n) {
    patchesDiscarded += n;
  }

  void countDataSourceRefused() {
    dataSourcesRefused++;
  }

  long dataSourcesRefused() {
    return dataSourcesRefused;
  }

  void countAbiViolation() {
    abiViolations++;
  }

  long abiViolations() {
    return abiViolations;
  }

  /** QueryServiceState: a caller of uid 0 sees every session, others only their own. */
  TracingServiceState serviceState(int callerUid, boolean sessionsOnly) {
    TracingServiceState.Builder st = TracingServiceState.newBuilder()
        .setSupportsTracingSessions(true)
        .setTracingServiceVersion(ServicePackets.SERVICE_VERSION)
        .setNumSessions(state.sessionCount());
    int started = 0;
    for (ServiceSession s : state.sessions()) {
      if (s.state == ServiceSession.State.STARTED) {
        started++;
      }
      if (callerUid != 0 && callerUid != s.consumerUid) {
        continue; // other users' sessions are not shown
      }
      TracingServiceState.TracingSession.Builder ts = TracingServiceState.TracingSession.newBuilder()
          .setId(s.id).setConsumerUid(s.consumerUid).setState(s.state.name())
          .setUniqueSessionName(s.config.getUniqueSessionName())
          .setDurationMs(s.config.getDurationMs())
          .setNumDataSources(s.instances.size())
          .setIsStarted(s.state == ServiceSession.State.STARTED);
      for (TraceConfig.BufferConfig b : s.config.getBuffersList()) {
        ts.addBufferSizeKb(b.getSizeKb());
      }
      st.addTracingSessions(ts);
    }
    st.setNumSessionsStarted(started);
    if (!sessionsOnly) {
      for (ProducerConnection p : state.producers()) {
        TracingServiceState.Producer.Builder b = TracingServiceState.Producer.newBuilder().setId(p.id)
            .setName(p.name).setUid(p.identity.uid()).setPid(p.identity.pid()).setSdkVersion(p.sdkVersion);
        if (!p.identity.isHostMachine()) { // as traced: machine info for relayed producers only
          b.setMachineId(p.identity.machineId());
          if (!p.identity.machineName().isEmpty()) {
            b.setMachineName(p.identity.machineName());
          }
        }
        st.addProducers(b);
      }
      for (RegisteredDataSource r : state.dataSources()) {
        st.addDataSources(TracingServiceState.DataSource.newBuilder()
            .setDsDescriptor(r.descriptor()).setProducerId(r.producerId()));
      }
    }
    return st.build();
  }

  /** QueryCapabilities: what this service implements. */
  static TracingServiceCapabilities capabilities() {
    return TracingServiceCapabilities.newBuilder()
        .setHasQueryCapabilities(true)
        .addObservableEvents(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES)
        .addObservableEvents(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED)
        .addObservableEvents(ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT)
        .setHasTraceConfigOutputPath(false)
        .setHasCloneSession(true)
        .build();
  }

  /** Service-wide counters, and the buffers and session counters of s if not null. */
  TraceStats traceStats(ServiceSession s) {
    TraceStats.Builder t = TraceStats.newBuilder()
        .setProducersConnected(state.producerCount())
        .setProducersSeen(producersSeen)
        .setDataSourcesRegistered(state.dataSources().size())
        .setDataSourcesSeen(dataSourcesSeen)
        .setTracingSessions(state.sessionCount())
        .setTotalBuffers(state.bufferCount())
        .setChunksDiscarded(chunksDiscarded)
        .setPatchesDiscarded(patchesDiscarded);
    if (s != null) {
      t.setInvalidPackets(s.invalidPackets)
          .setFlushesRequested(s.flushesRequested)
          .setFlushesSucceeded(s.flushesSucceeded)
          .setFlushesFailed(s.flushesFailed)
          .setFinalFlushOutcome(s.finalFlushOutcome);
      TraceBuffer[] sessionBuffers = new TraceBuffer[s.bufferIds.length];
      for (int i = 0; i < s.bufferIds.length; i++) {
        TraceBuffer b = sessionBuffers[i] = state.buffer(s.bufferIds[i]);
        if (b != null) {
          t.addBufferStats(BufferStatsMapper.toProto(b.stats()));
        }
      }
      if (!s.config.getBuiltinDataSources().getDisableChunkUsageHistograms()) {
        WriterStatsMapper.addTo(t, s, sessionBuffers);
      }
    }
    return t.build();
  }
}
