package org.jperfetto.service;

/**
 * The service's limits and defaults, in one place: what a session, a producer and a read may use,
 * and the periods and timeouts the service applies when a config leaves them out. Upstream's
 * traced has most of them under the same values (the comments say where it has none);
 * docs/limits.md lists them for users.
 */
public final class ServiceLimits {
  /** Largest ReadBuffersResponse slice (upstream kMaxTracePacketSliceSize: 128 KiB - 512). */
  public static final int MAX_SLICE_SIZE = 128 * 1024 - 512;
  /** About this many bytes of slices per {@link ConsumerCallbacks#onTraceData} batch. */
  public static final int READ_BATCH_BYTES = 128 * 1024;
  public static final int MAX_SESSIONS = 15;
  public static final int MAX_SESSIONS_PER_UID = 5;
  public static final int MAX_BUFFERS_PER_SESSION = 128;
  /**
   * Data sources one producer may have registered at once. Upstream's traced has no such limit; a
   * process has a few (Chrome and traced_probes register tens), so this only stops a producer
   * that would grow the registry, and every QueryServiceState answer, without end.
   */
  public static final int MAX_DATA_SOURCES_PER_PRODUCER = 1024;
  /**
   * Flushes of one session waiting for producers' acks (each holds a timer and sent a Flush
   * command to every producer of the session); past it a flush fails at once, as in upstream's
   * traced, which refuses past 1000.
   */
  public static final int MAX_PENDING_FLUSHES = 1000;
  /**
   * Encoded descriptor bytes one producer may have registered at once (a descriptor alone may be
   * as large as a frame, 128 KiB): with the count above, what a producer's registrations cost.
   */
  public static final long MAX_DESCRIPTOR_BYTES_PER_PRODUCER = 8L << 20;
  public static final int DEFAULT_FLUSH_TIMEOUT_MS = 5000;
  public static final int DEFAULT_DATA_SOURCE_STOP_TIMEOUT_MS = 5000;
  public static final long MAX_DURATION_MS = 7L * 24 * 3600 * 1000;
  /** Default interval of sync markers, clock snapshots and stats while tracing. */
  public static final int DEFAULT_SNAPSHOT_INTERVAL_MS = 10_000;
  /** trusted_packet_sequence_id of the service's own packets. */
  public static final int SERVICE_SEQUENCE_ID = 1;
  /** write_into_file drain period when the config gives none, and the smallest allowed. */
  public static final int DEFAULT_FILE_WRITE_PERIOD_MS = 5000;
  public static final int MIN_FILE_WRITE_PERIOD_MS = 100;
  /** Smallest flush_period_ms and incremental_state_config.clear_period_ms honoured. */
  public static final int MIN_PERIODIC_TASK_MS = 100;

  private ServiceLimits() {}
}
