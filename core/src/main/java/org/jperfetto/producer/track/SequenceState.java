package org.jperfetto.producer.track;

import java.util.Arrays;
import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.DebugAnnotationName;
import org.jperfetto.protos.EventCategory;
import org.jperfetto.protos.EventName;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.TracePacket;

/**
 * The incremental state of one sequence (one thread's writer for one session): interning tables,
 * the track descriptors already written, the last timestamp of the delta clock. It is valid for one
 * writer and one clear-incremental-state generation; {@link ThreadState} starts it afresh when
 * either changes. Entries interned while a packet is written are queued and go out in that same
 * packet's interned_data.
 */
final class SequenceState {
  static final int KIND_CATEGORY = 0;
  static final int KIND_EVENT_NAME = 1;
  static final int KIND_ANNOTATION_NAME = 2;
  private static final int[] INTERNED_FIELD = {
      InternedData.EVENT_CATEGORIES_FIELD_NUMBER,
      InternedData.EVENT_NAMES_FIELD_NUMBER,
      InternedData.DEBUG_ANNOTATION_NAMES_FIELD_NUMBER,
  };
  // EventCategory, EventName and DebugAnnotationName share the layout {iid = 1, name = 2}.
  private static final int IID_FIELD = EventName.IID_FIELD_NUMBER;
  private static final int NAME_FIELD = EventName.NAME_FIELD_NUMBER;
  static {
    if (EventCategory.IID_FIELD_NUMBER != IID_FIELD || DebugAnnotationName.IID_FIELD_NUMBER != IID_FIELD
        || EventCategory.NAME_FIELD_NUMBER != NAME_FIELD || DebugAnnotationName.NAME_FIELD_NUMBER != NAME_FIELD) {
      throw new AssertionError("interned message layouts differ");
    }
  }

  TraceWriter writer;
  Session session;
  int generation;
  long lastTimestamp;
  // A field per kind, not an array: a lookup on the trace point is then one load fewer, and no
  // bounds check, before the table's own last-found entry.
  private final InternTable categories = new InternTable();
  private final InternTable eventNames = new InternTable();
  private final InternTable annotationNames = new InternTable();
  final UuidSet tracks = new UuidSet();

  private int pendingCount;
  private int[] pendingKind = new int[8];
  private int[] pendingIid = new int[8];
  private String[] pendingValue = new String[8];

  /**
   * A packet's timestamp for an event at ts: the delta from the sequence's last timestamp (which ts
   * then becomes), or absolute when the session's timestamps are or the clock went back (on an
   * incremental sequence, then with CLOCK_MONOTONIC's clock id).
   */
  void writeTimestamp(ProtoWriter p, long ts) {
    if (!session.incrementalTimestamps()) {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
    } else if (ts >= lastTimestamp) {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts - lastTimestamp);
      lastTimestamp = ts;
    } else {
      p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, ts);
      p.appendVarInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, TrackEventEncoder.CLOCK_ID_MONOTONIC);
    }
  }

  /** Whether this state still belongs to writer, session and generation. */
  boolean isCurrent(TraceWriter w, Session s, int gen) {
    return writer == w && session == s && generation == gen;
  }

  /** Forgets everything: the next packet is the first of the new incremental state. */
  void reset(TraceWriter w, Session s, int gen, long timestamp) {
    writer = w;
    session = s;
    generation = gen;
    lastTimestamp = timestamp;
    categories.clear();
    eventNames.clear();
    annotationNames.clear();
    tracks.clear();
    clearPending();
  }

  private InternTable table(int kind) {
    return switch (kind) {
      case KIND_CATEGORY -> categories;
      case KIND_EVENT_NAME -> eventNames;
      case KIND_ANNOTATION_NAME -> annotationNames;
      default -> throw new IllegalArgumentException("no interning table of kind " + kind);
    };
  }

  /** The iid of value in table kind, interning it (queued for this packet) if new; 0 if full. */
  int intern(int kind, String value) {
    InternTable table = table(kind);
    int iid = table.find(value);
    if (iid != 0) {
      return iid;
    }
    iid = table.add(value);
    if (iid != 0) {
      queue(kind, iid, value);
    }
    return iid;
  }

  private void queue(int kind, int iid, String value) {
    if (pendingCount == pendingKind.length) {
      int n = pendingCount * 2;
      pendingKind = Arrays.copyOf(pendingKind, n);
      pendingIid = Arrays.copyOf(pendingIid, n);
      pendingValue = Arrays.copyOf(pendingValue, n);
    }
    pendingKind[pendingCount] = kind;
    pendingIid[pendingCount] = iid;
    pendingValue[pendingCount] = value;
    pendingCount++;
  }

  /** Whether strings were interned for the packet being written (it needs interned_data). */
  boolean hasPendingInterned() {
    return pendingCount != 0;
  }

  /** Writes the packet's newly interned entries as its interned_data (nothing if none). */
  void writePendingInterned(ProtoWriter packet) {
    if (pendingCount == 0) {
      return;
    }
    packet.beginNested(TracePacket.INTERNED_DATA_FIELD_NUMBER);
    for (int i = 0; i < pendingCount; i++) {
      packet.beginNested(INTERNED_FIELD[pendingKind[i]]);
      packet.appendVarInt(IID_FIELD, pendingIid[i]);
      packet.appendString(NAME_FIELD, pendingValue[i]);
      packet.endNested();
    }
    packet.endNested();
    clearPending();
  }

  /**
   * The packet being written was abandoned (its trace function threw): entries queued for it never
   * reach the trace, so the tables must not claim them. Dropping the whole state is simplest; the
   * next event starts a new incremental state.
   */
  void abandonPending() {
    if (pendingCount > 0) {
      writer = null;
    }
    clearPending();
  }

  private void clearPending() {
    Arrays.fill(pendingValue, 0, pendingCount, null);
    pendingCount = 0;
  }
}
