package org.jperfetto.producer.track;

import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.producer.TraceContext;
import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.ProcessDescriptor;
import org.jperfetto.protos.ThreadDescriptor;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracePacketDefaults;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEventDefaults;

/**
 * One thread's TrackEvent state: its writers and, per session, the sequence's incremental state
 * (started and restarted here: the clock snapshot, this thread's and the process's track
 * descriptors, the descriptors of the tracks its events name), the lane to the only active
 * session, and the event being emitted ({@link TrackEventEncoder}, its fields set by {@link
 * TrackEvent} before {@link DataSource#trace} runs this once per active session), which the
 * encoder writes. Nothing here allocates per event.
 *
 * <p>A platform thread has one of its own, its events on its thread track. Virtual threads share
 * a few unbound ones ({@link VirtualThreadStates}), each held by one virtual thread for one event
 * ({@link #tryClaim}, released at its end): every event then names that virtual thread's own track
 * ({@link Track#ofVirtualThread}), described once per sequence, so that slices nest per virtual
 * thread whichever carrier and writer its events took.
 */
final class ThreadState implements DataSource.TraceFunction<Session> {
  /** Tracks a sequence describes before it starts a new incremental state (see writeTrackDescriptor). */
  static final int MAX_DESCRIBED_TRACKS = 1024;
  private static final int SEQ_INCREMENTAL_STATE_CLEARED =
      TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE;
  private static final int SEQ_NEEDS_INCREMENTAL_STATE = TrackEventEncoder.SEQ_NEEDS_INCREMENTAL_STATE;
  private static final int CLOCK_ID_INCREMENTAL = TrackEventEncoder.CLOCK_ID_INCREMENTAL;
  private static final int CLOCK_ID_MONOTONIC = TrackEventEncoder.CLOCK_ID_MONOTONIC;

  private final TrackEvent owner;
  private final DataSource<Session> dataSource;
  /** This thread's writers of dataSource, held so an event costs one ThreadLocal lookup (ours). */
  private final DataSource.ThreadWriters<Session> writers;
  private final Thread thread;
  private final long tid;
  private final long threadUuid;
  private final SequenceState[] sequences = new SequenceState[DataSource.MAX_INSTANCES];
  private final TrackEventEncoder event = new TrackEventEncoder();
  /** Whether an event is staged in {@link #event} (a trace point reached from its function is dropped). */
  private boolean busy;
  /** Whether this state serves virtual threads, one event at a time (no thread of its own). */
  private final boolean unbound;
  /** An unbound state of a TrackEvent built with carrierTids: events name their carrier. */
  private final boolean carrierTids;
  /** For an unbound state: 1 while a virtual thread holds it for an event. */
  private final java.util.concurrent.atomic.AtomicInteger claimed;
  /** An unbound state's track for events without one: the holding virtual thread's. */
  private Track threadTrack;
  /** The thread threadTrack belongs to (an unbound state keeps the last holder's). */
  private long threadTrackOf = -1;

  /** The time emitAt reads as "now". */
  static final long NOW = Long.MIN_VALUE;

  // The lane: this thread's writer, sequence and session of the data source's only active
  // instance, kept while the data source's instancesVersion() stays laneVersion (see findLane); the
  // version also moves when the instance's incremental state is cleared.
  private long laneVersion = -1;
  private long laneLookedAt = -1;
  private int laneMask;
  private TraceWriter laneWriter;
  private SequenceState laneSeq;
  private Session laneSession;

  /** The calling thread's state (it holds that thread's writers of dataSource). */
  ThreadState(TrackEvent owner, DataSource<Session> dataSource) {
    this.owner = owner;
    this.dataSource = dataSource;
    this.writers = dataSource.threadWriters();
    this.thread = Thread.currentThread();
    this.tid = ProcessInfo.currentTid();
    this.threadUuid = ProcessInfo.current().threadUuid(tid);
    this.unbound = false;
    this.carrierTids = false;
    this.claimed = null;
  }

  /** A state of no thread, for virtual threads to hold one event at a time, with writers of its own. */
  static ThreadState unbound(TrackEvent owner, DataSource<Session> dataSource) {
    return new ThreadState(owner, dataSource, dataSource.unboundWriters());
  }

  private ThreadState(TrackEvent owner, DataSource<Session> dataSource, DataSource.ThreadWriters<Session> writers) {
    this.owner = owner;
    this.dataSource = dataSource;
    this.writers = writers;
    this.thread = null;
    this.tid = 0;
    this.threadUuid = 0; // no thread track: every event names its virtual thread's track
    this.unbound = true;
    this.carrierTids = owner.carrierTids();
    this.claimed = new java.util.concurrent.atomic.AtomicInteger();
  }

  /**
   * For an unbound state: takes it for one event of virtual thread current, whose track events
   * without one go to; false if another holds it. Ends with {@link #emit} or a declined lane call.
   */
  boolean tryClaim(Thread current) {
    if (claimed.get() != 0 || !claimed.compareAndSet(0, 1)) {
      return false;
    }
    long id = current.threadId();
    if (id != threadTrackOf) {
      threadTrack = Track.ofVirtualThread(current);
      threadTrackOf = id;
    }
    return true;
  }

  /**
   * Waits until no one holds this state, and takes it. Parks briefly while it waits: the holder may
   * be a virtual thread that is not mounted (an event function that blocked, or, before the
   * producer's locks became MountedLocks, a flush waiting for the drain's monitor), and waiters
   * that only yielded kept every carrier busy (a yielded virtual thread is scheduled again first),
   * so the holder never ran again. The caller holds no state meanwhile, so parking is safe here.
   */
  void claimForFlush() {
    while (claimed.get() != 0 || !claimed.compareAndSet(0, 1)) {
      java.util.concurrent.locks.LockSupport.parkNanos(FLUSH_CLAIM_BACKOFF_NANOS);
    }
  }

  /** How long a flush waiting for a held state parks between looks. */
  private static final long FLUSH_CLAIM_BACKOFF_NANOS = 50_000;

  /** Ends an unbound state's hold (nothing for a thread's own state). */
  void release() {
    if (unbound) {
      claimed.set(0);
    }
  }

  /** A lane call's "no": the event goes the regular way, which claims an unbound state anew. */
  private boolean declined() {
    release();
    return false;
  }

  /** Hands every writer's chunk to the service (the caller holds this state). */
  void flushWriters(DataSource.TraceFunction<Session> flush) {
    dataSource.trace(writers, flush);
  }

  /** The thread this state belongs to. */
  Thread thread() {
    return thread;
  }

  long threadUuid() {
    return threadUuid;
  }

  long tid() {
    return tid;
  }

  /**
   * Starts an event; returns false if this thread is already emitting one (a trace point reached from
   * inside an event function: dropped, as upstream's reentrancy guard does).
   */
  boolean start(int eventType, Category eventCategory, Track eventTrack, String eventName) {
    if (busy) {
      return false;
    }
    busy = true;
    // threadTrack is null on a thread's own state: its events go to the sequence's default track
    event.start(eventType, eventCategory, eventTrack != null ? eventTrack : threadTrack, eventName);
    return true;
  }

  void arg(String argName, int kind, long bits, String text) {
    event.arg(argName, kind, bits, text);
  }

  void counter(boolean isDouble, long bits) {
    event.counter(isDouble, bits);
  }

  void function(TrackEvent.EventFunction fn) {
    event.function(fn);
  }

  /**
   * Timestamps the event, writes it to every active session, and forgets it. With one session
   * active (the common case), recording this event's category, and its incremental state not cleared
   * since, the event goes straight to that session's writer (the lane) instead of through the data
   * source's loop over instances and {@link #trace}'s per-instance lookups.
   */
  void emit() {
    emitAt(NOW);
  }

  /**
   * As {@link #emit}, the event timestamped at {@code when} on {@link System#nanoTime()}'s clock
   * ({@link #NOW}: the current time). A time before the sequence's last event goes out as an
   * absolute CLOCK_MONOTONIC timestamp (the incremental clock only moves forward).
   */
  void emitAt(long when) {
    try {
      if (carrierTids) {
        addCarrier();
      }
      event.timestamp(when == NOW ? System.nanoTime() : when);
      if (laneVersion == dataSource.instancesVersion() && event.category().enabledInstances() == laneMask) {
        write(laneWriter, laneSeq, laneSession);
        laneWriter.finishTracePacket();
      } else {
        dataSource.trace(writers, this);
        if (!unbound) {
          findLane();
        }
      }
    } finally {
      event.clear();
      busy = false;
      release();
    }
  }

  /**
   * With {@link TrackEvent.Builder#carrierTids}: a virtual thread's slice begin or instant says
   * which carrier ran it, an int debug annotation {@value #CARRIER_TID_ARG} with the carrier's tid
   * (a virtual thread's slices hop between carriers across sleeps and parks). Only when the event
   * has room for another inline argument; its name is interned once per sequence, so it costs the
   * gettid system call (about 400 ns on the project's VMs, no cheaper way to tell a carrier from
   * public API) and a few bytes, and allocates nothing.
   */
  private void addCarrier() {
    if (event.takesAnotherArg()) {
      event.arg(CARRIER_TID_ARG, TrackEventEncoder.ARG_LONG, org.jperfetto.os.Threads.currentTid(), null);
    }
  }

  /** The debug annotation naming a virtual thread's carrier (see {@link #addCarrier}). */
  static final String CARRIER_TID_ARG = "carrier_tid";

  @Override
  public void trace(TraceContext<Session> ctx) {
    int index = ctx.instance().index();
    if (!event.category().isEnabledFor(index)) {
      return;
    }
    Session session = ctx.state();
    if (session == null) {
      return;
    }
    TraceWriter writer = ctx.writer();
    SequenceState seq = sequences[index];
    if (seq == null) {
      seq = new SequenceState();
      sequences[index] = seq;
    }
    int generation = ctx.instance().incrementalStateGeneration();
    if (!seq.isCurrent(writer, session, generation)) {
      resetIncrementalState(seq, writer, session, generation);
    }
    write(writer, seq, session);
  }

  /**
   * The event into writer, on a sequence whose incremental state is current: after a loss a new
   * incremental state, the event's track described if the sequence has not yet, then the event.
   */
  private void write(TraceWriter writer, SequenceState seq, Session session) {
    if (writer.lossUnacknowledged() && writer.nextPacketMayLand()) {
      recoverFromLoss(writer, seq, session);
    }
    Track t = event.track();
    if (t != null && !seq.tracks.contains(t.uuid())) {
      writeTrackDescriptor(writer, seq, t);
    }
    event.write(writer, seq, session);
  }

  /**
   * After an event went the regular way: takes the lane if the data source now has one active
   * instance that this thread has written to (a new session's first event; at most one look per
   * change of the data source's instances). The version is read first, so that a change made while
   * looking leaves the lane unused.
   */
  private void findLane() {
    long version = dataSource.instancesVersion();
    if (version == laneLookedAt) {
      return;
    }
    laneLookedAt = version;
    laneVersion = -1;
    laneWriter = null; // nothing of a past session held on to
    laneSeq = null;
    laneSession = null;
    TraceContext<Session> ctx = dataSource.soleContext(writers);
    if (ctx == null || ctx.state() == null) {
      return;
    }
    DataSourceInstance<Session> instance = ctx.instance();
    SequenceState seq = sequences[instance.index()];
    if (seq == null || !seq.isCurrent(ctx.writer(), ctx.state(), instance.incrementalStateGeneration())) {
      return;
    }
    laneWriter = ctx.writer();
    laneSeq = seq;
    laneSession = ctx.state();
    laneMask = 1 << instance.index();
    laneVersion = version;
  }

  /** Whether this thread's events now go straight to the only active session's writer (for tests). */
  boolean onLane() {
    release();
    return laneVersion == dataSource.instancesVersion();
  }

  /** The descriptor of a track this sequence has not described yet, in a packet before the event's. */
  private void writeTrackDescriptor(TraceWriter writer, SequenceState seq, Track t) {
    if (seq.tracks.size() >= MAX_DESCRIBED_TRACKS) {
      // Virtual threads come and go without end: start the sequence afresh rather than remember
      // every track it ever described.
      resetIncrementalState(seq, writer, seq.session, seq.generation);
    }
    ProtoWriter p = writer.newTracePacket();
    seq.writeTimestamp(p, event.timestamp());
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    t.writeDescriptor(p, ProcessInfo.current().uuid());
    seq.tracks.add(t.uuid());
  }

  /**
   * A plain slice end on the thread's track, written on the lane without staging the event: {@link
   * TrackEventEncoder#encodePlainSlice}, then {@link TrackEventEncoder#tryStore}. Returns false,
   * having written nothing, when the event must go the regular way ({@link #start}, {@link #emit}):
   * no lane (or it no longer fits), an event function of this thread running, another TrackEvent's
   * category, absolute timestamps, a packet of another shape, or no room the writer can give
   * without the regular path (the SMB full, a flush).
   *
   * <p>The lane's three slice methods are small on purpose, one per shape with nothing to decide
   * between shapes: the JIT inlines each into its trace point and folds the shape's constants. A
   * single method for all three had compiled into more code than the JIT inlines, so every slice
   * event paid a call and tested at run time what its call site already knew.
   */
  boolean laneSliceEnd(Category c) {
    if (!laneFits(c)) {
      return declined();
    }
    SequenceState seq = laneSeq;
    long now = System.nanoTime();
    int packetSize = event.encodePlainSlice(seq, TrackEventEncoder.TYPE_SLICE_END, c, null,
        now - seq.lastTimestamp);
    return event.tryStore(laneWriter, seq, now, packetSize);
  }

  /**
   * A slice begin named eventName on the lane, as {@link #laneSliceEnd}; also false for a null
   * name and for strings not interned yet on the sequence.
   */
  boolean laneSliceBegin(Category c, String eventName) {
    if (!laneFits(c) || eventName == null) {
      return declined();
    }
    SequenceState seq = laneSeq;
    long now = System.nanoTime();
    int packetSize = event.encodePlainSlice(seq, TrackEventEncoder.TYPE_SLICE_BEGIN, c, eventName,
        now - seq.lastTimestamp);
    return event.tryStore(laneWriter, seq, now, packetSize);
  }

  /**
   * A slice begin with one int argument (argName not null) on the lane, as {@link
   * #laneSliceBegin(Category, String)}; also false when the session filters debug annotations and for values the
   * short packet does not take (negative or large).
   */
  boolean laneSliceBegin(Category c, String eventName, String argName, long value) {
    if (!laneFits(c) || eventName == null || laneSession.filterDebugAnnotations()) {
      return declined();
    }
    SequenceState seq = laneSeq;
    long now = System.nanoTime();
    int packetSize = event.encodeSliceWithInt(seq, c, eventName, argName, value, now - seq.lastTimestamp);
    return event.tryStore(laneWriter, seq, now, packetSize);
  }

  /**
   * An integer counter on the lane, as {@link #laneSliceEnd}: returns false, having written nothing,
   * when it must go the regular way (also for a track that is not a counter's, one this sequence
   * has not described yet, and values the short packet does not take).
   */
  boolean laneCounter(Category c, Track t, long value) {
    if (!laneFits(c) || !t.isCounter() || !laneSeq.tracks.contains(t.uuid())) {
      return declined();
    }
    SequenceState seq = laneSeq;
    long now = System.nanoTime();
    int packetSize = event.encodeShortCounter(seq, t, value, now - seq.lastTimestamp);
    return event.tryStore(laneWriter, seq, now, packetSize);
  }

  /**
   * Whether an event of category c may go down the lane: the lane is current (no instance changed
   * and no incremental state was cleared since it was taken), c is this TrackEvent's and records
   * exactly the lane's instance, no event function of this thread is running, and the session uses
   * incremental timestamps.
   */
  private boolean laneFits(Category c) {
    return laneVersion == dataSource.instancesVersion() && c.enabledInstances() == laneMask && !busy
        && c.owner() == owner && laneSession.incrementalTimestamps();
  }

  /**
   * After the writer dropped packets: a new incremental state, so that what follows the loss can be
   * read. The packets lost may have held interned strings, track descriptors or clock deltas that
   * later packets build on, and trace_processor skips every packet of the sequence that needs
   * incremental state from a loss until the state is cleared; without this, a burst that filled the
   * SMB once would show nothing of this thread after that moment. (Upstream's SDK leaves that to a
   * periodic clear, incremental_state_config.clear_period_ms, off by default.) Written only when
   * its first packet may land in the buffer; if the writer drops again meanwhile, the next event
   * tries again.
   */
  private void recoverFromLoss(TraceWriter writer, SequenceState seq, Session session) {
    resetIncrementalState(seq, writer, session, seq.generation);
    writer.acknowledgeLoss();
  }

  /**
   * Starts a new incremental state on the sequence: a packet with SEQ_INCREMENTAL_STATE_CLEARED
   * that sets the packet defaults (clock, this thread's track) and, for delta timestamps, a clock
   * snapshot tying the incremental clock to CLOCK_MONOTONIC; then this thread's and the process's
   * track descriptors. Same shape as upstream's SDK.
   */
  private void resetIncrementalState(SequenceState seq, TraceWriter writer, Session session, int generation) {
    long timestamp = event.timestamp();
    seq.reset(writer, session, generation, timestamp);
    boolean incremental = session.incrementalTimestamps();
    ProtoWriter p = writer.newTracePacket();
    seq.writeTimestamp(p, timestamp);
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_INCREMENTAL_STATE_CLEARED);
    p.beginNested(TracePacket.TRACE_PACKET_DEFAULTS_FIELD_NUMBER);
    p.appendVarInt(TracePacketDefaults.TIMESTAMP_CLOCK_ID_FIELD_NUMBER,
        incremental ? CLOCK_ID_INCREMENTAL : CLOCK_ID_MONOTONIC);
    if (!unbound) {
      p.beginNested(TracePacketDefaults.TRACK_EVENT_DEFAULTS_FIELD_NUMBER);
      p.appendVarInt(TrackEventDefaults.TRACK_UUID_FIELD_NUMBER, threadUuid);
      p.endNested();
    }
    p.endNested();
    if (incremental) {
      p.beginNested(TracePacket.CLOCK_SNAPSHOT_FIELD_NUMBER);
      p.beginNested(ClockSnapshot.CLOCKS_FIELD_NUMBER);
      p.appendVarInt(ClockSnapshot.Clock.CLOCK_ID_FIELD_NUMBER, CLOCK_ID_MONOTONIC);
      p.appendVarInt(ClockSnapshot.Clock.TIMESTAMP_FIELD_NUMBER, timestamp);
      p.endNested();
      p.beginNested(ClockSnapshot.CLOCKS_FIELD_NUMBER);
      p.appendVarInt(ClockSnapshot.Clock.CLOCK_ID_FIELD_NUMBER, CLOCK_ID_INCREMENTAL);
      p.appendVarInt(ClockSnapshot.Clock.TIMESTAMP_FIELD_NUMBER, timestamp);
      p.appendBool(ClockSnapshot.Clock.IS_INCREMENTAL_FIELD_NUMBER, true);
      p.appendVarInt(ClockSnapshot.Clock.UNIT_MULTIPLIER_NS_FIELD_NUMBER, 1);
      p.endNested();
      p.endNested();
    }
    ProcessInfo process = ProcessInfo.current();
    if (!unbound) {
      writeThreadDescriptor(writer, seq, process);
    }
    writeProcessDescriptor(writer, seq, process);
  }

  /** This thread's track descriptor, in a packet of its own. */
  private void writeThreadDescriptor(TraceWriter writer, SequenceState seq, ProcessInfo process) {
    seq.tracks.add(threadUuid);
    ProtoWriter p = writer.newTracePacket();
    seq.writeTimestamp(p, event.timestamp());
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    p.beginNested(TracePacket.TRACK_DESCRIPTOR_FIELD_NUMBER);
    p.appendVarInt(TrackDescriptor.UUID_FIELD_NUMBER, threadUuid);
    p.appendVarInt(TrackDescriptor.PARENT_UUID_FIELD_NUMBER, process.uuid());
    p.beginNested(TrackDescriptor.THREAD_FIELD_NUMBER);
    p.appendVarInt(ThreadDescriptor.PID_FIELD_NUMBER, process.pid());
    p.appendVarInt(ThreadDescriptor.TID_FIELD_NUMBER, tid);
    p.appendString(ThreadDescriptor.THREAD_NAME_FIELD_NUMBER, Thread.currentThread().getName());
    p.endNested();
    p.endNested();
  }

  /** The process's track descriptor, in a packet of its own. */
  private void writeProcessDescriptor(TraceWriter writer, SequenceState seq, ProcessInfo process) {
    seq.tracks.add(process.uuid());
    ProtoWriter p = writer.newTracePacket();
    seq.writeTimestamp(p, event.timestamp());
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    p.beginNested(TracePacket.TRACK_DESCRIPTOR_FIELD_NUMBER);
    p.appendVarInt(TrackDescriptor.UUID_FIELD_NUMBER, process.uuid());
    p.beginNested(TrackDescriptor.PROCESS_FIELD_NUMBER);
    p.appendVarInt(ProcessDescriptor.PID_FIELD_NUMBER, process.pid());
    for (String arg : process.cmdline()) {
      p.appendString(ProcessDescriptor.CMDLINE_FIELD_NUMBER, arg);
    }
    p.appendString(ProcessDescriptor.PROCESS_NAME_FIELD_NUMBER, owner.processName());
    p.endNested();
    p.endNested();
  }
}
