package org.jperfetto.service;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jperfetto.protos.TraceConfig;

/**
 * The service's record of one tracing session (a consumer holds its own handle on it, the
 * consumer's TracingSession): its config, buffers, data sources and what is left to emit.
 */
final class ServiceSession {
  enum State { CONFIGURED, STARTED, DISABLING_WAITING_STOP_ACKS, DISABLED, CLONED_READ_ONLY }

  /** A trigger that hit this session, for the trace's Trigger packets. */
  record ReceivedTrigger(String name, String producerName, int producerUid, long stopDelayMs,
      long timestampNs) {}

  /** A service event to emit: the TracingServiceEvent field set to true, and when. */
  record LifecycleEvent(int fieldNumber, long timestampNs) {}

  /** A flush in progress: the producers that have not acked yet. */
  static final class PendingFlush {
    final long requestId;
    final java.util.Set<Integer> producersPending = new java.util.TreeSet<>();
    final java.util.function.Consumer<Boolean> done;
    TaskRunner.Cancellable timeout;

    PendingFlush(long requestId, java.util.function.Consumer<Boolean> done) {
      this.requestId = requestId;
      this.done = done;
    }
  }

  final long id;
  /** The owning consumer; null while detached. */
  ConsumerConnection consumer;
  /** The key of Detach while detached, else null. */
  String detachKey;
  final int consumerUid;
  TraceConfig config;
  /** Service-wide buffer ids; index i is the config's buffers[i]. */
  final int[] bufferIds;
  final List<SessionDataSource> instances = new ArrayList<>();
  final Map<Long, PendingFlush> pendingFlushes = new HashMap<>();
  /** A flush past {@link ServiceLimits#MAX_PENDING_FLUSHES} was refused and said so once. */
  boolean flushRefusalLogged;
  final long uuidMsb;
  final long uuidLsb;
  State state = State.CONFIGURED;

  private final Map<Long, Integer> sequenceIds = new HashMap<>();
  private int lastSequenceId = ServiceLimits.SERVICE_SEQUENCE_ID;

  final List<List<ClockSource.Reading>> clockSnapshots = new ArrayList<>();
  final List<LifecycleEvent> lifecycleEvents = new ArrayList<>();
  boolean didEmitTraceConfig;
  boolean didEmitInitialPackets;
  /** The remote machines' clock sync rounds are written once, at the first read with relays. */
  boolean didEmitRemoteClockSync;
  /** How the final flush of a session that ended by itself (duration, trigger timeout) went. */
  org.jperfetto.protos.TraceStats.FinalFlushOutcome finalFlushOutcome =
      org.jperfetto.protos.TraceStats.FinalFlushOutcome.FINAL_FLUSH_UNSPECIFIED;
  boolean shouldEmitStats;
  boolean shouldEmitSyncMarker;
  boolean allDataSourcesStartedNotified;
  long invalidPackets;
  long flushesRequested;
  long flushesSucceeded;
  long flushesFailed;
  final List<ReceivedTrigger> receivedTriggers = new ArrayList<>();
  int triggersEmitted;
  /** write_into_file: where the buffers drain, how much went there so far. */
  ConsumerEndpoint.TraceFileSink fileSink;
  long bytesWrittenIntoFile;
  /** Why writing into the trace file failed (the session then ends with this error), or null. */
  String fileWriteError;
  /** The ReadBuffers in progress, paused while the consumer drains what it got; or null. */
  SessionReadCursor readCursor;
  TaskRunner.Cancellable triggerTimer;
  TaskRunner.Cancellable durationTimer;
  TaskRunner.Cancellable stopTimer;

  ServiceSession(long id, ConsumerConnection consumer, int consumerUid, TraceConfig config,
      int[] bufferIds, java.util.UUID uuid) {
    this(id, consumer, consumerUid, config, bufferIds, uuid.getMostSignificantBits(),
        uuid.getLeastSignificantBits());
  }

  ServiceSession(long id, ConsumerConnection consumer, int consumerUid, TraceConfig config,
      int[] bufferIds, long uuidMsb, long uuidLsb) {
    this.id = id;
    this.consumer = consumer;
    this.consumerUid = consumerUid;
    this.config = config;
    this.bufferIds = bufferIds;
    this.uuidMsb = uuidMsb;
    this.uuidLsb = uuidLsb;
  }

  /** trusted_packet_sequence_id of a writer: unique per {producer, writer} within the session. */
  int sequenceIdFor(int producerId, int writerId) {
    long key = ((long) producerId << 16) | (writerId & 0xFFFF);
    Integer id = sequenceIds.get(key);
    if (id == null) {
      id = ++lastSequenceId;
      sequenceIds.put(key, id);
    }
    return id;
  }

  long flushTimeoutMs() {
    return config.getFlushTimeoutMs() > 0 ? config.getFlushTimeoutMs()
        : ServiceLimits.DEFAULT_FLUSH_TIMEOUT_MS;
  }

  long dataSourceStopTimeoutMs() {
    return config.getDataSourceStopTimeoutMs() > 0 ? config.getDataSourceStopTimeoutMs()
        : ServiceLimits.DEFAULT_DATA_SOURCE_STOP_TIMEOUT_MS;
  }

  TraceConfig.TriggerConfig.TriggerMode triggerMode() {
    return config.getTriggerConfig().getTriggerMode();
  }

  /** A STOP_TRACING session with no trigger yet: its data is not handed out. */
  boolean isWaitingForStopTrigger() {
    return triggerMode() == TraceConfig.TriggerConfig.TriggerMode.STOP_TRACING
        && receivedTriggers.isEmpty();
  }

  @SuppressWarnings("deprecation") // compression_type: the older of the two ways a config asks for it
  boolean isCompressed() {
    return config.getCompressionType() == TraceConfig.CompressionType.COMPRESSION_TYPE_DEFLATE
        || config.getCompression().hasDeflate();
  }

  void addLifecycleEvent(int fieldNumber, long timestampNs) {
    lifecycleEvents.add(new LifecycleEvent(fieldNumber, timestampNs));
  }
}
