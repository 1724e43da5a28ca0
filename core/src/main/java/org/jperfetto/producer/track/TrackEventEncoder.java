package org.jperfetto.producer.track;

import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ChunkPacketEncoder;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.BuiltinClock;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;

/**
 * How a TrackEvent packet is encoded: the one event being emitted on a thread (staged by {@link
 * ThreadState}, its fields set by {@link TrackEvent}) and the ways it reaches a writer, tried in
 * this order by {@link #write}:
 *
 * <ol>
 *   <li>the short packets: a slice begin or end on the thread's track with at most one int
 *       argument, or an integer counter, assembled field by field in a {@link ShortPacket} and
 *       stored with a few 8-byte stores ({@link #encodeSliceEnd}, {@link #encodeSliceBegin},
 *       {@link #encodeSliceBeginWithInt}, {@link #encodeCounter}); the lane ({@link
 *       ThreadState#laneSliceBegin}) uses the same encodings without staging the event;
 *   <li>the fixed-shape packet: an event whose strings are all interned already and with no event
 *       function, sized up front and written straight into the chunk ({@link ChunkPacketEncoder});
 *   <li>the general encoding ({@link ProtoWriter}): anything else, interned_data and event
 *       functions included.
 * </ol>
 *
 * <p>The contract between them: a faster form, whenever it takes an event, writes the very bytes
 * the general encoding writes for it (the field order type, category_iids, track_uuid, name_iid,
 * counter value, debug annotations; the timestamp as a delta when it can be; the same iids, interned
 * in the same order). The one difference: a packet the general encoding splits across two chunks
 * keeps the 4-byte size it reserved for track_event, where a faster form, which never splits a
 * packet, writes one byte. The faster forms only decline, never differ otherwise;
 * TrackEventEncodingProperties checks it through real writers, ShortSlicePacketTest the short
 * packets' layouts. Nothing here allocates per event.
 */
final class TrackEventEncoder {
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
  private static final int EVENT_CATEGORIES = org.jperfetto.protos.TrackEvent.CATEGORIES_FIELD_NUMBER;
  private static final int EVENT_TRACK_UUID = org.jperfetto.protos.TrackEvent.TRACK_UUID_FIELD_NUMBER;
  private static final int EVENT_NAME_IID = org.jperfetto.protos.TrackEvent.NAME_IID_FIELD_NUMBER;
  private static final int EVENT_NAME = org.jperfetto.protos.TrackEvent.NAME_FIELD_NUMBER;
  private static final int EVENT_COUNTER_VALUE = org.jperfetto.protos.TrackEvent.COUNTER_VALUE_FIELD_NUMBER;
  private static final int EVENT_DOUBLE_COUNTER_VALUE =
      org.jperfetto.protos.TrackEvent.DOUBLE_COUNTER_VALUE_FIELD_NUMBER;
  private static final int EVENT_DEBUG_ANNOTATIONS = org.jperfetto.protos.TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER;
  static final int SEQ_NEEDS_INCREMENTAL_STATE = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;
  private static final int TIMESTAMP_TAG = ProtoWire.varIntTag(TracePacket.TIMESTAMP_FIELD_NUMBER);
  private static final int TRACK_EVENT_TAG =
      ProtoWire.makeTag(TracePacket.TRACK_EVENT_FIELD_NUMBER, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
  private static final int SEQUENCE_FLAGS_NEEDS_STATE =
      ProtoWire.varIntTag(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER) | SEQ_NEEDS_INCREMENTAL_STATE << 8;
  /**
   * A slice end's bytes after its timestamp, little-endian: track_event (length-delimited, 2 bytes:
   * type = SLICE_END), then sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE.
   */
  static final long SLICE_END_TAIL = TRACK_EVENT_TAG
      | 2L << 8
      | (long) ProtoWire.varIntTag(EVENT_TYPE) << 16
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
      | (long) ProtoWire.varIntTag(EVENT_TYPE) << 16
      | (long) TYPE_SLICE_BEGIN << 24
      | (long) ProtoWire.varIntTag(EVENT_CATEGORY_IIDS) << 32
      | (long) ProtoWire.varIntTag(EVENT_NAME_IID) << 48;
  /** A slice begin packet's bytes besides its timestamp value: the timestamp tag, track_event, flags. */
  static final int SLICE_BEGIN_FIXED_BYTES = 1 + 8 + 2;

  /**
   * A slice begin's debug annotation with an interned name and an int value, little-endian, its
   * length (byte 1) and name iid (byte 3) left zero: tag, length, name_iid tag, int_value tag.
   */
  static final long INT_ANNOTATION_HEAD =
      ProtoWire.makeTag(EVENT_DEBUG_ANNOTATIONS, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED)
      | (long) ProtoWire.varIntTag(DebugAnnotation.NAME_IID_FIELD_NUMBER) << 16
      | (long) ProtoWire.varIntTag(DebugAnnotation.INT_VALUE_FIELD_NUMBER) << 32;
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
  private static final int COUNTER_VALUE_TAG = ProtoWire.varIntTag(EVENT_COUNTER_VALUE);
  private static final int COUNTER_VALUE_TAG_BYTES = Varints.size(COUNTER_VALUE_TAG);
  private static final long COUNTER_VALUE_TAG_BITS = ChunkPacketEncoder.varIntBits(COUNTER_VALUE_TAG);
  /**
   * An integer counter's track_event up to its track uuid, little-endian, its length (byte 1) left
   * zero: tag, length, type = COUNTER, track_uuid tag.
   */
  static final long COUNTER_EVENT_HEAD = TRACK_EVENT_TAG
      | (long) ProtoWire.varIntTag(EVENT_TYPE) << 16
      | (long) TYPE_COUNTER << 24
      | (long) ProtoWire.varIntTag(EVENT_TRACK_UUID) << 32;
  /**
   * An integer counter packet's bytes besides its timestamp, track uuid and value: the timestamp
   * tag, track_event's tag and length, its type, the track_uuid and counter_value tags, the flags.
   */
  static final int COUNTER_FIXED_BYTES = 1 + 2 + 2 + 1 + COUNTER_VALUE_TAG_BYTES + 2;


  // The event being emitted.
  private int type;
  private Category category;
  private Track track;
  private String name;
  private long timestamp;
  private boolean hasCounter;
  private boolean doubleCounter;
  private long counterBits;
  private int argCount;
  private final String[] argNames = new String[MAX_INLINE_ARGS];
  private final int[] argKinds = new int[MAX_INLINE_ARGS];
  private final long[] argBits = new long[MAX_INLINE_ARGS];
  private final String[] argTexts = new String[MAX_INLINE_ARGS];
  private TrackEvent.EventFunction function;
  // Interned ids of a fixed-shape event, found while sizing it.
  private int categoryIid;
  private int nameIid;
  private final int[] argIids = new int[MAX_INLINE_ARGS];
  private final ChunkPacketEncoder encoder = new ChunkPacketEncoder();
  private final ShortPacket shortPacket = new ShortPacket();
  private final EventContext context = new EventContext();

  // ---- the event ----

  /** Stages an event of eventType (track null: the thread's track, the sequence's default). */
  void start(int eventType, Category eventCategory, Track eventTrack, String eventName) {
    type = eventType;
    category = eventCategory;
    track = eventTrack;
    name = eventName;
  }

  void arg(String argName, int kind, long bits, String text) {
    int i = argCount++;
    argNames[i] = argName;
    argKinds[i] = kind;
    argBits[i] = bits;
    argTexts[i] = text;
  }

  /** Whether the event is a slice begin or an instant with room for another inline argument. */
  boolean takesAnotherArg() {
    return (type == TYPE_SLICE_BEGIN || type == TYPE_INSTANT) && argCount < MAX_INLINE_ARGS;
  }

  void counter(boolean isDouble, long bits) {
    hasCounter = true;
    doubleCounter = isDouble;
    counterBits = bits;
  }

  void function(TrackEvent.EventFunction fn) {
    function = fn;
  }

  /** The event's time on System.nanoTime()'s clock. */
  void timestamp(long nanoTime) {
    timestamp = nanoTime;
  }

  long timestamp() {
    return timestamp;
  }

  Category category() {
    return category;
  }

  /** The event's track, null for the thread's own. */
  Track track() {
    return track;
  }

  /** Forgets the event (nothing of it held on to). */
  void clear() {
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
  }

  // ---- choosing the form ----

  /**
   * The event into writer on seq, a sequence whose incremental state is current and which has
   * described the event's track: in the first of the forms above that takes it.
   */
  void write(TraceWriter writer, SequenceState seq, Session session) {
    Track t = track;
    if (t == null) {
      if ((type == TYPE_SLICE_END || type == TYPE_SLICE_BEGIN) && function == null && !hasCounter
          && tryWriteShortSlice(writer, seq, session)) {
        return;
      }
    } else if (type == TYPE_COUNTER && tryWriteShortCounter(writer, seq, session, t)) {
      return;
    }
    writeEvent(writer, seq, session, t, true);
  }

  /**
   * An event the short packets did not take: the fixed-shape packet when fixedShape is set and the
   * event has that shape and fits the chunk, else the general encoding (fixedShape false: that
   * alone, for tests that compare the forms). A method of its own, and too large for the JIT to
   * inline into {@link ThreadState#trace} (over HotSpot's 325-byte FreqInlineSize): in a young JVM
   * the single C2 thread compiles trace first, and with this code inlined that one compile took
   * 0.25 s on a slow 2-core VM and ran out of inlining budget before the short path of the
   * reference burst's commonest event.
   */
  void writeEvent(TraceWriter writer, SequenceState seq, Session session, Track t, boolean fixedShape) {
    if (fixedShape && tryWriteFixedShape(writer, seq, session, t)) {
      return;
    }
    ProtoWriter p = writer.newTracePacket();
    seq.writeTimestamp(p, timestamp);
    p.beginNested(TracePacket.TRACK_EVENT_FIELD_NUMBER);
    p.appendVarInt(EVENT_TYPE, type);
    if (type != TYPE_SLICE_END && type != TYPE_COUNTER) {
      int iid = seq.intern(SequenceState.KIND_CATEGORY, category.name());
      if (iid != 0) {
        p.appendVarInt(EVENT_CATEGORY_IIDS, iid);
      } else {
        p.appendString(EVENT_CATEGORIES, category.name());
      }
    }
    if (t != null) {
      p.appendVarInt(EVENT_TRACK_UUID, t.uuid());
    }
    if (name != null) {
      int iid = seq.intern(SequenceState.KIND_EVENT_NAME, name);
      if (iid != 0) {
        p.appendVarInt(EVENT_NAME_IID, iid);
      } else {
        p.appendString(EVENT_NAME, name);
      }
    }
    if (hasCounter) {
      if (doubleCounter) {
        p.appendDouble(EVENT_DOUBLE_COUNTER_VALUE, Double.longBitsToDouble(counterBits));
      } else {
        p.appendVarInt(EVENT_COUNTER_VALUE, counterBits);
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

  // ---- the fixed-shape packet ----

  /**
   * The event as a fixed-shape packet if it has that shape (see {@link #fixedShapeEventSize}) and
   * fits the chunk whole; false, having written nothing, otherwise.
   */
  boolean tryWriteFixedShape(TraceWriter writer, SequenceState seq, Session session, Track t) {
    int eventSize = fixedShapeEventSize(seq, session, t);
    return eventSize >= 0 && writeFixedShapeEvent(writer, seq, session, t, eventSize);
  }

  /**
   * The size of the TrackEvent message of an event with no event function, no string argument and
   * every string already interned on the sequence (so the packet has no interned_data): the common
   * trace point, whose sizes can all go out up front. -1 for any other event. Interns the category,
   * name and argument names in the order the general encoding does, keeping their iids for the writer.
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
   * returns false, writing nothing, otherwise, and the general encoding writes the same bytes.
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

  // ---- the short packets ----

  /**
   * A slice begin or end on the thread's own track with no counter or function and at most one
   * argument, a non-negative int on a begin (the commonest packets, the reference workload's among
   * them), when the category, name and argument name are interned with one-byte iids: assembled
   * field by field ({@link ShortPacket}) and stored in two or three 8-byte stores. Returns false,
   * writing nothing, for any other event or when the timestamp is not a delta small enough; a
   * packet the writer cannot take now is still written ({@link #storeInNextChunk}).
   */
  boolean tryWriteShortSlice(TraceWriter writer, SequenceState seq, Session session) {
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
   * An integer counter whose value and timestamp delta are non-negative and below 2^56: assembled
   * like the short slices, up to four 8-byte stores. Returns false, writing nothing, for any other
   * counter; a packet the writer cannot take now is still written ({@link #storeInNextChunk}).
   */
  boolean tryWriteShortCounter(TraceWriter writer, SequenceState seq, Session session, Track t) {
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
   * A slice begin with one non-negative int argument into the short packet, its category, name and
   * argument name interned with one-byte iids, when the delta and value need 7 varint bytes or
   * fewer between them; returns the packet's size, or -1.
   */
  int encodeSliceWithInt(SequenceState seq, Category c, String eventName, String argName, long value, long delta) {
    // A negative delta or value takes 10 varint bytes, so the size test refuses those too.
    int n = Varints.size(delta);
    int m = Varints.size(value);
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
   * A slice begin or end with nothing attached into the short packet, its category and name
   * interned with one-byte iids; returns the packet's size, or -1 for a delta that is negative or
   * from 2^56 up, or strings not interned yet (new strings go out as interned_data with the
   * packet: the general encoding's work).
   */
  int encodePlainSlice(SequenceState seq, int eventType, Category c, String eventName, long delta) {
    if (delta < 0 || (delta >>> 56) != 0) {
      return -1;
    }
    int n = Varints.size(delta);
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
   * An integer counter on track t into the short packet, value and delta non-negative and below
   * 2^56, the packet within {@link ShortPacket#MAX_BYTES}, nothing interned waiting to go out;
   * returns the packet's size, or -1.
   */
  int encodeShortCounter(SequenceState seq, Track t, long value, long delta) {
    if (((delta | value) >>> 56) != 0 || seq.hasPendingInterned()) {
      return -1;
    }
    int packetSize = COUNTER_FIXED_BYTES + Varints.size(delta) + t.uuidVarIntSize()
        + Varints.size(value);
    if (packetSize + 1 > ShortPacket.MAX_BYTES) {
      return -1;
    }
    encodeCounter(shortPacket, packetSize, delta, t.uuidVarIntSize(), t.uuidVarIntLowBits(),
        t.uuidVarIntHighBits(), value);
    return packetSize;
  }

  /**
   * Claims room on writer for the short packet just encoded (packetSize bytes, or -1 for none) and
   * stores it, timestamped now; false if there is no packet or no room. For the lane, which returns
   * this answer as it is: a test of its own on it would be taken only when the SMB is full, and one
   * the JIT had not seen taken would be left out of the trace point inlined into the app's code,
   * which would be thrown away in the middle of the burst that filled the SMB.
   */
  boolean tryStore(TraceWriter writer, SequenceState seq, long now, int packetSize) {
    if (packetSize < 0) {
      return false;
    }
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
   * Claims room for the short packet just encoded (packetSize bytes after its size byte), stores it
   * there and moves the sequence's delta clock on; when the writer cannot take it in the current
   * chunk, {@link #storeInNextChunk} writes the event.
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
   * only the general encoding handles: into the next chunk if the writer takes one, else through
   * {@link #writeEvent}, here. A method of its own, too large to be inlined at that frequency, so
   * that the rare outcome (the SMB full, the first packet after a flush) is a branch only this
   * method's compiled code depends on: had the trace point itself a test taken only when the SMB
   * fills, C2 would leave that path out of it unless the profile happened to see it, and throw the
   * compiled trace point away in the middle of the burst that filled the SMB.
   */
  private void storeInNextChunk(TraceWriter writer, SequenceState seq, Session session, Track t, int packetSize) {
    long at = writer.beginSmallPacketInNextChunk(packetSize);
    if (at >= 0) {
      storeAt(writer, seq, at, packetSize, timestamp);
    } else {
      writeEvent(writer, seq, session, t, true);
    }
  }

  private void storeAt(TraceWriter writer, SequenceState seq, long at, int packetSize, long eventTimestamp) {
    seq.lastTimestamp = eventTimestamp;
    shortPacket.store(writer.chunkMemory(), at, packetSize + 1);
    writer.endSmallPacket();
  }

  // ---- the short packets' layouts ----

  /**
   * An integer counter packet, size byte first: [size][timestamp][track_event {type, track_uuid,
   * counter_value}][sequence_flags], delta and value below 2^56, packetSize + 1 at most {@link
   * ShortPacket#MAX_BYTES}; the track uuid's varint is u bytes, uuidLow and uuidHigh ({@link
   * ChunkPacketEncoder#varIntLowBits}, {@link ChunkPacketEncoder#varIntHighBits}).
   */
  static void encodeCounter(ShortPacket packet, int packetSize, long delta, int u, long uuidLow, long uuidHigh,
      long value) {
    int m = Varints.size(value);
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
   * A slice begin packet with one int annotation, size byte first: [size][timestamp][track_event
   * {type, category_iids, name_iid, debug_annotations {name_iid, int_value}}][sequence_flags], the
   * three iids below 128, packetSize + 1 at most {@link #SHORT_SLICE_MAX_BYTES}.
   */
  static void encodeSliceBeginWithInt(ShortPacket packet, int packetSize, long delta, int categoryIid, int nameIid,
      int argIid, long value) {
    int m = Varints.size(value);
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
}
