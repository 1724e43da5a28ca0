package org.jperfetto.producer.track;

import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.producer.TraceContext;
import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.BuiltinClock;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.ProcessDescriptor;
import org.jperfetto.protos.ThreadDescriptor;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracePacketDefaults;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.protos.TrackEventDefaults;
import org.jperfetto.wire.ProtoWire;

/**
 * One thread's TrackEvent machinery: the event being emitted (its fields set by {@link TrackEvent}
 * before {@link DataSource#trace} runs this once per active session) and, per session, the
 * sequence's incremental state. Nothing here allocates per event.
 *
 * <p>A platform thread has one of its own, its events on its thread track. Virtual threads share
 * a few unbound ones ({@link VirtualThreadStates}), each held by one virtual thread for one event
 * ({@link #tryClaim}, released at its end): every event then names that virtual thread's own track
 * ({@link Track#ofVirtualThread}), described once per sequence, so that slices nest per virtual
 * thread whichever carrier and writer its events took.
 */
final class ThreadState implements DataSource.TraceFunction<Session> {
  static final int ARG_LONG = 1;
  static final int ARG_DOUBLE = 2;
  static final int ARG_BOOL = 3;
  static final int ARG_STRING = 4;
  static final int MAX_INLINE_ARGS = 2;

  /** The sequence-scoped incremental clock (upstream's first non-builtin clock id). */
  static final int CLOCK_ID_INCREMENTAL = 64;
  static final int CLOCK_ID_MONOTONIC = BuiltinClock.BUILTIN_CLOCK_MONOTONIC_VALUE;
  static final int TYPE_SLICE_BEGIN = org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE;
  static final int TYPE_SLICE_END = org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_END_VALUE;
  static final int TYPE_INSTANT = org.jperfetto.protos.TrackEvent.Type.TYPE_INSTANT_VALUE;
  static final int TYPE_COUNTER = org.jperfetto.protos.TrackEvent.Type.TYPE_COUNTER_VALUE;
  private static final int EVENT_TYPE = org.jperfetto.protos.TrackEvent.TYPE_FIELD_NUMBER;
  private static final int EVENT_CATEGORY_IIDS = org.jperfetto.protos.TrackEvent.CATEGORY_IIDS_FIELD_NUMBER;
  private static final int EVENT_TRACK_UUID = org.jperfetto.protos.TrackEvent.TRACK_UUID_FIELD_NUMBER;
  private static final int EVENT_NAME_IID = org.jperfetto.protos.TrackEvent.NAME_IID_FIELD_NUMBER;
  private static final int EVENT_COUNTER_VALUE = org.jperfetto.protos.TrackEvent.COUNTER_VALUE_FIELD_NUMBER;
  private static final int EVENT_DOUBLE_COUNTER_VALUE =
      org.jperfetto.protos.TrackEvent.DOUBLE_COUNTER_VALUE_FIELD_NUMBER;
  private static final int EVENT_DEBUG_ANNOTATIONS = org.jperfetto.protos.TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER;
  private static final int SEQ_INCREMENTAL_STATE_CLEARED =
      TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE;
  private static final int SEQ_NEEDS_INCREMENTAL_STATE =
      TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;
  private static final int TIMESTAMP_TAG = varIntTag(TracePacket.TIMESTAMP_FIELD_NUMBER);
  private static final int TRACK_EVENT_TAG =
      ProtoWire.makeTag(TracePacket.TRACK_EVENT_FIELD_NUMBER, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
  private static final int SEQUENCE_FLAGS_NEEDS_STATE =
      varIntTag(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER) | SEQ_NEEDS_INCREMENTAL_STATE << 8;
  /**
   * A slice end's bytes after its timestamp, little-endian: track_event (length-delimited, 2 bytes:
   * type = SLICE_END), then sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE.
   */
  static final long SLICE_END_TAIL = TRACK_EVENT_TAG
      | 2L << 8
      | (long) varIntTag(EVENT_TYPE) << 16
      | (long) TYPE_SLICE_END << 24
      | (long) SEQUENCE_FLAGS_NEEDS_STATE << 32;
  /** A slice end packet's bytes besides its timestamp value: the timestamp tag and the tail. */
  static final int SLICE_END_FIXED_BYTES = 1 + 6;
  /**
   * A slice begin's track_event after its timestamp, little-endian, its two iid bytes (5 and 7) left
   * zero: tag, length 6, type = SLICE_BEGIN, category_iids tag, name_iid tag.
   */
  static final long SLICE_BEGIN_EVENT = TRACK_EVENT_TAG
      | 6L << 8
      | (long) varIntTag(EVENT_TYPE) << 16
      | (long) TYPE_SLICE_BEGIN << 24
      | (long) varIntTag(EVENT_CATEGORY_IIDS) << 32
      | (long) varIntTag(EVENT_NAME_IID) << 48;
  /** A slice begin packet's bytes besides its timestamp value: the timestamp tag, track_event, flags. */
  static final int SLICE_BEGIN_FIXED_BYTES = 1 + 8 + 2;

  /**
   * A slice begin's debug annotation with an interned name and an int value, little-endian, its
   * length (byte 1) and name iid (byte 3) left zero: tag, length, name_iid tag, int_value tag.
   */
  static final long INT_ANNOTATION_HEAD =
      ProtoWire.makeTag(EVENT_DEBUG_ANNOTATIONS, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED)
      | (long) varIntTag(DebugAnnotation.NAME_IID_FIELD_NUMBER) << 16
      | (long) varIntTag(DebugAnnotation.INT_VALUE_FIELD_NUMBER) << 32;
  /**
   * A slice begin with one int annotation: its packet's bytes besides the timestamp and annotation
   * values: the slice begin's and 5 of the annotation (tag, length, name_iid tag and value, int tag).
   */
  static final int SLICE_BEGIN_INT_FIXED_BYTES = SLICE_BEGIN_FIXED_BYTES + 5;
  /**
   * The largest slice packet (size byte included) the short path writes: three longs. The size
   * test against it also turns away the ten-byte varints of negative deltas and values.
   */
  static final int SHORT_SLICE_MAX_BYTES = 3 * Long.BYTES;

  /** A counter value's tag: field 30, so two varint bytes. */
  private static final int COUNTER_VALUE_TAG = ProtoWire.makeTag(EVENT_COUNTER_VALUE, ProtoWire.WIRE_TYPE_VARINT);
  private static final int COUNTER_VALUE_TAG_BYTES = ProtoWire.varIntSize(COUNTER_VALUE_TAG);
  private static final long COUNTER_VALUE_TAG_BITS = ChunkPacketEncoder.varIntBits(COUNTER_VALUE_TAG);
  /**
   * An integer counter's track_event up to its track uuid, little-endian, its length (byte 1) left
   * zero: tag, length, type = COUNTER, track_uuid tag.
   */
  static final long COUNTER_EVENT_HEAD = TRACK_EVENT_TAG
      | (long) varIntTag(EVENT_TYPE) << 16
      | (long) TYPE_COUNTER << 24
      | (long) varIntTag(EVENT_TRACK_UUID) << 32;
  /**
   * An integer counter packet's bytes besides its timestamp, track uuid and value: the timestamp
   * tag, track_event's tag and length, its type, the track_uuid and counter_value tags, the flags.
   */
  static final int COUNTER_FIXED_BYTES = 1 + 2 + 2 + 1 + COUNTER_VALUE_TAG_BYTES + 2;

  /** The one-byte tag of a varint field numbered below 16. */
  private static int varIntTag(int field) {
    return ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_VARINT);
  }

  /** Tracks a sequence describes before it starts a new incremental state (see writeTrackDescriptor). */
  static final int MAX_DESCRIBED_TRACKS = 1024;

  private final TrackEvent owner;
  private final DataSource<Session> dataSource;
  /** This thread's writers of dataSource, held so an event costs one ThreadLocal lookup (ours). */
  private final DataSource.ThreadWriters<Session> writers;
  private final Thread thread;
  private final long tid;
  private final long threadUuid;
  private final SequenceState[] sequences = new SequenceState[DataSource.MAX_INSTANCES];
  private final EventContext context = new EventContext();
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

  // The lane: this thread's writer, sequence and session of the data source's only active
  // instance, kept while the data source's instancesVersion() stays laneVersion (see findLane); the
  // version also moves when the instance's incremental state is cleared.
  private long laneVersion = -1;
  private long laneLookedAt = -1;
  private int laneMask;
  private TraceWriter laneWriter;
  private SequenceState laneSeq;
  private Session laneSession;

  // The event being emitted.
  private int type;
  private Category category;
  private Track track;
  private String name;
  private long timestamp;
  /** The time emitAt reads as "now". */
  static final long NOW = Long.MIN_VALUE;
  private boolean hasCounter;
  private boolean doubleCounter;
  private long counterBits;
  private int argCount;
  private final String[] argNames = new String[MAX_INLINE_ARGS];
  private final int[] argKinds = new int[MAX_INLINE_ARGS];
  private final long[] argBits = new long[MAX_INLINE_ARGS];
  // Interned ids of a fixed-shape event, found while sizing it.
  private int categoryIid;
  private int nameIid;
  private final int[] argIids = new int[MAX_INLINE_ARGS];
  private final ChunkPacketEncoder encoder = new ChunkPacketEncoder();
  private final ShortPacket shortPacket = new ShortPacket();
  private final String[] argTexts = new String[MAX_INLINE_ARGS];
  private TrackEvent.EventFunction function;

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
    type = eventType;
    category = eventCategory;
    track = eventTrack != null ? eventTrack : threadTrack; // null on a thread's own state
    name = eventName;
    return true;
  }

  void arg(String argName, int kind, long bits, String text) {
    int i = argCount++;
    argNames[i] = argName;
    argKinds[i] = kind;
    argBits[i] = bits;
    argTexts[i] = text;
  }

  void counter(boolean isDouble, long bits) {
    hasCounter = true;
    doubleCounter = isDouble;
    counterBits = bits;
  }

  void function(TrackEvent.EventFunction fn) {
    function = fn;
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
      timestamp = when == NOW ? System.nanoTime() : when;
      if (laneVersion == dataSource.instancesVersion() && category.enabledInstances() == laneMask) {
        write(laneWriter, laneSeq, laneSession);
        laneWriter.finishTracePacket();
      } else {
        dataSource.trace(writers, this);
        if (!unbound) {
          findLane();
        }
      }
    } finally {
      category = null;
      track = null;
      name = null;
      function = null;
      hasCounter = false;
      for (int i = 0; i < argCount; i++) {
        argNames[i] = null;
        argTexts[i] = null;
      }
      argCount = 0;
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
    if ((type == TYPE_SLICE_BEGIN || type == TYPE_INSTANT) && argCount < MAX_INLINE_ARGS) {
      arg(CARRIER_TID_ARG, ARG_LONG, org.jperfetto.os.Threads.currentTid(), null);
    }
  }

  /** The debug annotation naming a virtual thread's carrier (see {@link #addCarrier}). */
  static final String CARRIER_TID_ARG = "carrier_tid";

  @Override
  public void trace(TraceContext<Session> ctx) {
    int index = ctx.instance().index();
    if (!category.isEnabledFor(index)) {
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

  /** The event into writer, on a sequence whose incremental state is current. */
  private void write(TraceWriter writer, SequenceState seq, Session session) {
    if (writer.lossUnacknowledged() && writer.nextPacketMayLand()) {
      recoverFromLoss(writer, seq, session);
    }
    Track t = track;
    if (t == null) {
      if ((type == TYPE_SLICE_END || type == TYPE_SLICE_BEGIN) && function == null && !hasCounter
          && tryWriteShortSlice(writer, seq, session)) {
        return;
      }
    } else {
      if (!seq.tracks.contains(t.uuid())) {
        writeTrackDescriptor(writer, seq, t);
      }
      if (type == TYPE_COUNTER && tryWriteShortCounter(writer, seq, session, t)) {
        return;
      }
    }
    writeEvent(writer, seq, session, t);
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
    writeTimestamp(p, seq);
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    t.writeDescriptor(p, ProcessInfo.current().uuid());
    seq.tracks.add(t.uuid());
  }

  /**
   * An event the short paths did not take: the fixed-shape path when it can, else the general
   * one. A method of its own, and too large for the JIT to inline into {@link #trace} (over
   * HotSpot's 325-byte FreqInlineSize): in a young JVM the single C2 thread compiles trace first,
   * and with this code inlined that one compile took 0.25 s on a slow 2-core VM and ran out of
   * inlining budget before the short path of the reference burst's commonest event.
   */
  private void writeEvent(TraceWriter writer, SequenceState seq, Session session, Track t) {
    int eventSize = fixedShapeEventSize(seq, session, t);
    if (eventSize >= 0 && writeFixedShapeEvent(writer, seq, session, t, eventSize)) {
      return;
    }
    ProtoWriter p = writer.newTracePacket();
    writeTimestamp(p, seq);
    p.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
    p.appendVarInt(org.jperfetto.protos.TrackEvent.TYPE_FIELD_NUMBER, type);
    if (type != TYPE_SLICE_END && type != TYPE_COUNTER) {
      int iid = seq.intern(SequenceState.KIND_CATEGORY, category.name());
      if (iid != 0) {
        p.appendVarInt(org.jperfetto.protos.TrackEvent.CATEGORY_IIDS_FIELD_NUMBER, iid);
      } else {
        p.appendString(org.jperfetto.protos.TrackEvent.CATEGORIES_FIELD_NUMBER, category.name());
      }
    }
    if (t != null) {
      p.appendVarInt(org.jperfetto.protos.TrackEvent.TRACK_UUID_FIELD_NUMBER, t.uuid());
    }
    if (name != null) {
      int iid = seq.intern(SequenceState.KIND_EVENT_NAME, name);
      if (iid != 0) {
        p.appendVarInt(org.jperfetto.protos.TrackEvent.NAME_IID_FIELD_NUMBER, iid);
      } else {
        p.appendString(org.jperfetto.protos.TrackEvent.NAME_FIELD_NUMBER, name);
      }
    }
    if (hasCounter) {
      if (doubleCounter) {
        p.appendDouble(org.jperfetto.protos.TrackEvent.DOUBLE_COUNTER_VALUE_FIELD_NUMBER,
            Double.longBitsToDouble(counterBits));
      } else {
        p.appendVarInt(org.jperfetto.protos.TrackEvent.COUNTER_VALUE_FIELD_NUMBER, counterBits);
      }
    }
    if (argCount > 0 || function != null) {
      context.begin(p, seq, session.filterDebugAnnotations());
      try {
        for (int i = 0; i < argCount; i++) {
          context.inlineArg(argNames[i], argKinds[i], argBits[i], argTexts[i]);
        }
        if (function != null) {
          function.write(context);
        }
        context.finish();
      } catch (RuntimeException | Error e) {
        seq.abandonPending();
        throw e;
      }
    }
    p.endNested();
    seq.writePendingInterned(p);
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
  }

  /**
   * The size of the TrackEvent message of an event with no event function, no string argument and
   * every string already interned on the sequence (so the packet has no interned_data): the common
   * trace point, whose sizes can all go out up front. -1 for any other event. Interns the category,
   * name and argument names in the order the general path does, keeping their iids for the writer.
   */
  private int fixedShapeEventSize(SequenceState seq, Session session, Track t) {
    if (function != null) {
      return -1;
    }
    int size = ProtoWire.varIntFieldSize(EVENT_TYPE, type);
    if (type != TYPE_SLICE_END && type != TYPE_COUNTER) {
      int iid = seq.intern(SequenceState.KIND_CATEGORY, category.name());
      if (iid == 0) {
        return -1;
      }
      categoryIid = iid;
      size += ProtoWire.varIntFieldSize(EVENT_CATEGORY_IIDS, iid);
    }
    if (t != null) {
      size += ProtoWire.varIntFieldSize(EVENT_TRACK_UUID, t.uuid());
    }
    if (name != null) {
      int iid = seq.intern(SequenceState.KIND_EVENT_NAME, name);
      if (iid == 0) {
        return -1;
      }
      nameIid = iid;
      size += ProtoWire.varIntFieldSize(EVENT_NAME_IID, iid);
    }
    if (hasCounter) {
      size += doubleCounter ? ProtoWire.fixed64FieldSize(EVENT_DOUBLE_COUNTER_VALUE)
          : ProtoWire.varIntFieldSize(EVENT_COUNTER_VALUE, counterBits);
    }
    if (!session.filterDebugAnnotations()) {
      for (int i = 0; i < argCount; i++) {
        int body = argBodySize(seq, i);
        if (body < 0) {
          return -1;
        }
        size += ProtoWire.lengthDelimitedFieldSize(EVENT_DEBUG_ANNOTATIONS, body);
      }
    }
    return seq.hasPendingInterned() ? -1 : size;
  }

  /** Size of the DebugAnnotation of inline argument i (interning its name), or -1 for a string. */
  private int argBodySize(SequenceState seq, int i) {
    int iid = seq.intern(SequenceState.KIND_ANNOTATION_NAME, argNames[i]);
    if (iid == 0) {
      return -1;
    }
    argIids[i] = iid;
    return annotationSize(argKinds[i], iid, argBits[i]);
  }

  /** Size of a DebugAnnotation with an interned name and a value of kind; -1 for a string. */
  private static int annotationSize(int kind, int nameIid, long bits) {
    int size = ProtoWire.varIntFieldSize(DebugAnnotation.NAME_IID_FIELD_NUMBER, nameIid);
    return switch (kind) {
      case ARG_LONG -> size + ProtoWire.varIntFieldSize(DebugAnnotation.INT_VALUE_FIELD_NUMBER, bits);
      case ARG_DOUBLE -> size + ProtoWire.fixed64FieldSize(DebugAnnotation.DOUBLE_VALUE_FIELD_NUMBER);
      case ARG_BOOL -> size + ProtoWire.varIntFieldSize(DebugAnnotation.BOOL_VALUE_FIELD_NUMBER, 1);
      default -> -1;
    };
  }

  /**
   * Writes the packet of a fixed-shape event (see {@link #fixedShapeEventSize}) straight into the
   * chunk, every size known up front, when it fits there whole ({@link TraceWriter#beginSmallPacket});
   * returns false, writing nothing, otherwise, and the general path writes the same bytes.
   */
  private boolean writeFixedShapeEvent(TraceWriter writer, SequenceState seq, Session session, Track t,
      int eventSize) {
    long ts = timestamp;
    boolean incremental = seq.session.incrementalTimestamps();
    boolean absolute = !incremental || ts < seq.lastTimestamp;
    long tsValue = absolute ? ts : ts - seq.lastTimestamp;
    boolean clockId = incremental && absolute; // the clock went back: an absolute CLOCK_MONOTONIC time
    int packetSize = ProtoWire.varIntFieldSize(TracePacket.TIMESTAMP_FIELD_NUMBER, tsValue)
        + (clockId ? ProtoWire.varIntFieldSize(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_ID_MONOTONIC) : 0)
        + ProtoWire.lengthDelimitedFieldSize(TracePacket.TRACK_EVENT_FIELD_NUMBER, eventSize)
        + ProtoWire.varIntFieldSize(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    long at = writer.beginSmallPacket(packetSize);
    if (at < 0) {
      return false;
    }
    if (incremental && !absolute) {
      seq.lastTimestamp = ts;
    }
    ChunkPacketEncoder e = encoder.begin(writer.chunkMemory(), at);
    e.rawByte(packetSize);
    e.varInt(TracePacket.TIMESTAMP_FIELD_NUMBER, tsValue);
    if (clockId) {
      e.varInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_ID_MONOTONIC);
    }
    e.nested(TracePacket.TRACK_EVENT_FIELD_NUMBER, eventSize);
    e.varInt(EVENT_TYPE, type);
    if (type != TYPE_SLICE_END && type != TYPE_COUNTER) {
      e.varInt(EVENT_CATEGORY_IIDS, categoryIid);
    }
    if (t != null) {
      e.varInt(EVENT_TRACK_UUID, t.uuid());
    }
    if (name != null) {
      e.varInt(EVENT_NAME_IID, nameIid);
    }
    if (hasCounter) {
      if (doubleCounter) {
        e.fixed64(EVENT_DOUBLE_COUNTER_VALUE, counterBits);
      } else {
        e.varInt(EVENT_COUNTER_VALUE, counterBits);
      }
    }
    if (!session.filterDebugAnnotations()) {
      for (int i = 0; i < argCount; i++) {
        writeArg(e, i);
      }
    }
    e.varInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, SEQ_NEEDS_INCREMENTAL_STATE);
    int written = e.finish();
    writer.endSmallPacket();
    if (written != packetSize + 1) { // a sizing bug: fail loudly rather than ship a bad packet silently
      throw new IllegalStateException("fixed-shape packet size mismatch: sized " + (packetSize + 1)
          + " bytes, wrote " + written);
    }
    return true;
  }

  /**
   * A slice begin or end on the thread's own track with no counter or function and at most one
   * argument, a non-negative int on a begin (the commonest packets, the reference workload's among
   * them), when the category, name and argument name are interned with one-byte iids: assembled
   * field by field ({@link ShortPacket}) and stored in two or three 8-byte stores, the same bytes the
   * fixed-shape path writes. Returns false, writing nothing, for any other event or when the
   * timestamp is not a delta small enough; a packet the writer cannot take now is still written
   * ({@link #storeInNextChunk}).
   *
   * <p>The encoding itself is {@link #encodePlainSlice} and {@link #encodeSliceWithInt}, shared
   * with the lane ({@link #laneSliceBegin}, {@link #laneSliceEnd}), which takes these events
   * without staging them whenever one session is active; this method serves the events that go
   * the regular way.
   */
  private boolean tryWriteShortSlice(TraceWriter writer, SequenceState seq, Session session) {
    long delta = timestamp - seq.lastTimestamp;
    if (!seq.session.incrementalTimestamps()) {
      return false;
    }
    int packetSize;
    if (argCount == 0) {
      packetSize = encodePlainSlice(seq, type, category, name, delta);
    } else {
      if (argCount != 1 || type != TYPE_SLICE_BEGIN || argKinds[0] != ARG_LONG || session.filterDebugAnnotations()) {
        return false;
      }
      packetSize = encodeSliceWithInt(seq, category, name, argNames[0], argBits[0], delta);
    }
    if (packetSize < 0) {
      return false;
    }
    storeShortPacket(writer, seq, session, null, packetSize);
    return true;
  }

  /**
   * A slice begin with one non-negative int argument into {@link #shortPacket}, its
   * category, name and argument name interned with one-byte iids, when the delta and value need 7
   * varint bytes or fewer between them; returns the packet's size, or -1.
   */
  private int encodeSliceWithInt(SequenceState seq, Category c, String eventName, String argName, long value,
      long delta) {
    // A negative delta or value takes 10 varint bytes, so the size test refuses those too.
    int n = ProtoWire.varIntSize(delta);
    int m = ProtoWire.varIntSize(value);
    if (n + m > SHORT_SLICE_MAX_BYTES - 1 - SLICE_BEGIN_INT_FIXED_BYTES) {
      return -1;
    }
    int categoryId = seq.intern(SequenceState.KIND_CATEGORY, c.name());
    int nameId = seq.intern(SequenceState.KIND_EVENT_NAME, eventName);
    int argId = seq.intern(SequenceState.KIND_ANNOTATION_NAME, argName);
    if (((categoryId | nameId | argId) & ~0x7F) != 0 || categoryId == 0 || nameId == 0 || argId == 0
        || seq.hasPendingInterned()) {
      return -1;
    }
    int packetSize = SLICE_BEGIN_INT_FIXED_BYTES + n + m;
    encodeSliceBeginWithInt(shortPacket, packetSize, delta, categoryId, nameId, argId, value);
    return packetSize;
  }

  /**
   * A slice begin or end with nothing attached into {@link #shortPacket}, its category and
   * name interned with one-byte iids; returns the packet's size, or -1 for a delta that is negative
   * or from 2^56 up, or strings not interned yet (new strings go out as interned_data with the
   * packet: the fixed-shape path's work).
   */
  private int encodePlainSlice(SequenceState seq, int eventType, Category c, String eventName, long delta) {
    if (delta < 0 || (delta >>> 56) != 0) {
      return -1;
    }
    int n = ProtoWire.varIntSize(delta);
    if (eventType == TYPE_SLICE_END) {
      encodeSliceEnd(shortPacket, SLICE_END_FIXED_BYTES + n, delta);
      return SLICE_END_FIXED_BYTES + n;
    }
    int categoryId = seq.intern(SequenceState.KIND_CATEGORY, c.name());
    int nameId = seq.intern(SequenceState.KIND_EVENT_NAME, eventName);
    if (((categoryId | nameId) & ~0x7F) != 0 || categoryId == 0 || nameId == 0 || seq.hasPendingInterned()) {
      return -1;
    }
    encodeSliceBegin(shortPacket, SLICE_BEGIN_FIXED_BYTES + n, delta, categoryId, nameId);
    return SLICE_BEGIN_FIXED_BYTES + n;
  }

  /**
   * A plain slice end on the thread's track, written on the lane without staging the event in this
   * state's fields: {@link #encodePlainSlice}, then the writer's small-packet claim. Returns false,
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
    int packetSize = encodePlainSlice(seq, TYPE_SLICE_END, c, null, now - seq.lastTimestamp);
    return laneStore(seq, now, packetSize);
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
    int packetSize = encodePlainSlice(seq, TYPE_SLICE_BEGIN, c, eventName, now - seq.lastTimestamp);
    return laneStore(seq, now, packetSize);
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
    int packetSize = encodeSliceWithInt(seq, c, eventName, argName, value, now - seq.lastTimestamp);
    return laneStore(seq, now, packetSize);
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
    int packetSize = encodeShortCounter(seq, t, value, now - seq.lastTimestamp);
    return laneStore(seq, now, packetSize);
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
   * Claims room on the lane's writer for the packet in {@link #shortPacket} (packetSize bytes, or
   * -1 for none) and stores it; false if there is no packet or no room. The lane methods return
   * this answer as it is: a test of their own on it would be taken only when the SMB is full, and
   * one the JIT had not seen taken would be left out of the trace point inlined into the app's
   * code, which would be thrown away in the middle of the burst that filled the SMB.
   */
  private boolean laneStore(SequenceState seq, long now, int packetSize) {
    if (packetSize < 0) {
      return false;
    }
    TraceWriter writer = laneWriter;
    long at = writer.beginSmallPacket(packetSize);
    if (at < 0) {
      at = writer.beginSmallPacketInNextChunk(packetSize);
      if (at < 0) {
        return false;
      }
    }
    storeAt(writer, seq, at, packetSize, now);
    return true;
  }

  /**
   * An integer counter whose value and timestamp delta are non-negative and below 2^56, on a track
   * this sequence has described: assembled like the short slices ({@link ShortPacket}), up to four 8-byte
   * stores, the same bytes the fixed-shape path writes. Returns false, writing nothing, for any
   * other counter; a packet the writer cannot take now is still written ({@link #storeInNextChunk}).
   */
  private boolean tryWriteShortCounter(TraceWriter writer, SequenceState seq, Session session, Track t) {
    if (doubleCounter || function != null || argCount != 0 || !seq.session.incrementalTimestamps()) {
      return false;
    }
    int packetSize = encodeShortCounter(seq, t, counterBits, timestamp - seq.lastTimestamp);
    if (packetSize < 0) {
      return false;
    }
    storeShortPacket(writer, seq, session, t, packetSize);
    return true;
  }

  /**
   * An integer counter on track t into {@link #shortPacket}, value and delta
   * non-negative and below 2^56, the packet within {@link ShortPacket#MAX_BYTES}, nothing interned
   * waiting to go out; returns the packet's size, or -1.
   */
  private int encodeShortCounter(SequenceState seq, Track t, long value, long delta) {
    if (((delta | value) >>> 56) != 0 || seq.hasPendingInterned()) {
      return -1;
    }
    int packetSize = COUNTER_FIXED_BYTES + ProtoWire.varIntSize(delta) + t.uuidVarIntSize()
        + ProtoWire.varIntSize(value);
    if (packetSize + 1 > ShortPacket.MAX_BYTES) {
      return -1;
    }
    encodeCounter(shortPacket, packetSize, delta, t.uuidVarIntSize(), t.uuidVarIntLowBits(),
        t.uuidVarIntHighBits(), value);
    return packetSize;
  }

  /**
   * An integer counter packet, size byte first: [size][timestamp][track_event {type, track_uuid,
   * counter_value}][sequence_flags], delta and value below 2^56, packetSize + 1 at most {@link
   * ShortPacket#MAX_BYTES}; the track uuid's varint is u bytes, uuidLow and uuidHigh ({@link
   * ChunkPacketEncoder#varIntLowBits}, {@link ChunkPacketEncoder#varIntHighBits}).
   */
  static void encodeCounter(ShortPacket packet, int packetSize, long delta, int u, long uuidLow, long uuidHigh,
      long value) {
    int m = ProtoWire.varIntSize(value);
    int n = packetSize - COUNTER_FIXED_BYTES - u - m;
    int eventBody = 2 + 1 + u + COUNTER_VALUE_TAG_BYTES + m; // type, track_uuid, counter_value
    int uuidAt = 7 + n;
    int valueTagAt = uuidAt + u;
    int valueAt = valueTagAt + COUNTER_VALUE_TAG_BYTES;
    packet.put(packetSize | TIMESTAMP_TAG << 8, 2, 0)
        .put(ChunkPacketEncoder.varIntBits(delta), n, 2)
        .put(COUNTER_EVENT_HEAD | (long) eventBody << 8, 5, 2 + n)
        .put(uuidLow, Math.min(u, Long.BYTES), uuidAt)
        .put(uuidHigh, Math.max(0, u - Long.BYTES), uuidAt + Long.BYTES)
        .put(COUNTER_VALUE_TAG_BITS, COUNTER_VALUE_TAG_BYTES, valueTagAt)
        .put(ChunkPacketEncoder.varIntBits(value), m, valueAt)
        .put(SEQUENCE_FLAGS_NEEDS_STATE, 2, valueAt + m);
  }

  /**
   * Claims room for the packet assembled in {@link #shortPacket} (packetSize bytes after its size
   * byte), stores it there and moves the sequence's delta clock on; when the writer cannot take it
   * in the current chunk, {@link #storeInNextChunk} writes the event.
   */
  private void storeShortPacket(TraceWriter writer, SequenceState seq, Session session, Track t, int packetSize) {
    long at = writer.beginSmallPacket(packetSize);
    if (at < 0) {
      storeInNextChunk(writer, seq, session, t, packetSize);
    } else {
      storeAt(writer, seq, at, packetSize, timestamp);
    }
  }

  /**
   * The short packet that found its chunk full (every few hundred packets) or the writer in a state
   * only the general path handles: into the next chunk if the writer takes one, else through the
   * general path, here. A method of its own, too large to be inlined at that frequency, so that the
   * rare outcome (the SMB full, the first packet after a flush) is a branch only this method's
   * compiled code depends on: had the trace point itself a test taken only when the SMB fills, C2
   * would leave that path out of it unless the profile happened to see it, and throw the compiled
   * trace point away in the middle of the burst that filled the SMB.
   */
  private void storeInNextChunk(TraceWriter writer, SequenceState seq, Session session, Track t, int packetSize) {
    long at = writer.beginSmallPacketInNextChunk(packetSize);
    if (at >= 0) {
      storeAt(writer, seq, at, packetSize, timestamp);
    } else {
      writeEvent(writer, seq, session, t);
    }
  }

  private void storeAt(TraceWriter writer, SequenceState seq, long at, int packetSize, long eventTimestamp) {
    seq.lastTimestamp = eventTimestamp;
    shortPacket.store(writer.chunkMemory(), at, packetSize + 1);
    writer.endSmallPacket();
  }

  /**
   * A slice begin packet with one int annotation, size byte first: [size][timestamp][track_event
   * {type, category_iids, name_iid, debug_annotations {name_iid, int_value}}][sequence_flags], the
   * three iids below 128, packetSize + 1 at most {@link #SHORT_SLICE_MAX_BYTES}.
   */
  static void encodeSliceBeginWithInt(ShortPacket packet, int packetSize, long delta, int categoryIid, int nameIid,
      int argIid, long value) {
    int m = ProtoWire.varIntSize(value);
    int n = packetSize - SLICE_BEGIN_INT_FIXED_BYTES - m;
    int annotationBody = 3 + m; // name_iid (2 bytes), the int tag and the value
    // type, category_iids and name_iid (2 bytes each), then the annotation's tag, length and body
    int eventBody = 6 + 2 + annotationBody;
    packet.put(packetSize | TIMESTAMP_TAG << 8, 2, 0)
        .put(ChunkPacketEncoder.varIntBits(delta), n, 2)
        .put((SLICE_BEGIN_EVENT & ~0xFF00L) | (long) eventBody << 8 | (long) categoryIid << 40
            | (long) nameIid << 56, 8, 2 + n)
        .put(INT_ANNOTATION_HEAD | (long) annotationBody << 8 | (long) argIid << 24, 5, 10 + n)
        .put(ChunkPacketEncoder.varIntBits(value), m, 15 + n)
        .put(SEQUENCE_FLAGS_NEEDS_STATE, 2, 15 + n + m);
  }

  /** A slice end packet, size byte first: [size][timestamp][track_event {type}][sequence_flags]. */
  static void encodeSliceEnd(ShortPacket packet, int packetSize, long delta) {
    int n = packetSize - SLICE_END_FIXED_BYTES;
    packet.put(packetSize | TIMESTAMP_TAG << 8, 2, 0)
        .put(ChunkPacketEncoder.varIntBits(delta), n, 2)
        .put(SLICE_END_TAIL, 6, 2 + n);
  }

  /**
   * A slice begin packet, size byte first: [size][timestamp][track_event {type, category_iids,
   * name_iid}][sequence_flags], both iids below 128.
   */
  static void encodeSliceBegin(ShortPacket packet, int packetSize, long delta, int categoryIid, int nameIid) {
    int n = packetSize - SLICE_BEGIN_FIXED_BYTES;
    packet.put(packetSize | TIMESTAMP_TAG << 8, 2, 0)
        .put(ChunkPacketEncoder.varIntBits(delta), n, 2)
        .put(SLICE_BEGIN_EVENT | (long) categoryIid << 40 | (long) nameIid << 56, 8, 2 + n)
        .put(SEQUENCE_FLAGS_NEEDS_STATE, 2, 10 + n);
  }

  /** Inline argument i of a fixed-shape event, its name interned by argBodySize. */
  private void writeArg(ChunkPacketEncoder e, int i) {
    int iid = argIids[i];
    int kind = argKinds[i];
    long bits = argBits[i];
    e.nested(EVENT_DEBUG_ANNOTATIONS, annotationSize(kind, iid, bits));
    e.varInt(DebugAnnotation.NAME_IID_FIELD_NUMBER, iid);
    switch (kind) {
      case ARG_LONG -> e.varInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, bits);
      case ARG_DOUBLE -> e.fixed64(DebugAnnotation.DOUBLE_VALUE_FIELD_NUMBER, bits);
      default -> e.varInt(DebugAnnotation.BOOL_VALUE_FIELD_NUMBER, bits != 0 ? 1 : 0);
    }
  }

  /** Delta from the sequence's last timestamp, or absolute when the clock went back or is absolute. */
  private void writeTimestamp(ProtoWriter p, SequenceState seq) {
    long ts = timestamp;
    if (!seq.session.incrementalTimestamps()) {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
    } else if (ts >= seq.lastTimestamp) {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts - seq.lastTimestamp);
      seq.lastTimestamp = ts;
    } else {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
      p.appendVarInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_ID_MONOTONIC);
    }
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
    seq.reset(writer, session, generation, timestamp);
    boolean incremental = session.incrementalTimestamps();
    ProtoWriter p = writer.newTracePacket();
    writeTimestamp(p, seq);
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
    writeTimestamp(p, seq);
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
    writeTimestamp(p, seq);
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
