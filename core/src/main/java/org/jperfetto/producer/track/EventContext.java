package org.jperfetto.producer.track;

import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.DebugAnnotation;

/**
 * Adds debug annotations and flows to the TrackEvent being written, inside an
 * {@link TrackEvent.EventFunction}. Top-level annotation names are interned; dictionaries and
 * arrays nest ({@link #beginDict}, {@link #beginArray}, {@link #end}), their entries carry plain
 * names. One object per thread, reused: do not keep it beyond the function.
 *
 * <pre>{@code
 * TRACK.event(CAT, "load", ctx -> ctx.arg("bytes", 4096L).beginDict("cfg").arg("lazy", true).end());
 * }</pre>
 */
public final class EventContext {
  private static final int MAX_DEPTH = 32;
  private static final byte IN_EVENT = 0;
  private static final byte IN_DICT = 1;
  private static final byte IN_ARRAY = 2;

  private ProtoWriter packet;
  private SequenceState sequence;
  private boolean filtered;
  private final byte[] kinds = new byte[MAX_DEPTH + 1];
  private int depth;

  EventContext() {}

  void begin(ProtoWriter packet, SequenceState sequence, boolean filterAnnotations) {
    this.packet = packet;
    this.sequence = sequence;
    this.filtered = filterAnnotations;
    this.depth = 0;
  }

  /** Closes dictionaries and arrays the function left open. */
  void finish() {
    while (depth > 0) {
      end();
    }
    packet = null;
    sequence = null;
  }

  // ---- named values (the event's top level, or inside a dictionary) ----

  /** Adds an integer debug annotation. */
  public EventContext arg(String name, long value) {
    if (openNamed(name)) {
      packet.appendVarInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** Adds a floating-point debug annotation. */
  public EventContext arg(String name, double value) {
    if (openNamed(name)) {
      packet.appendDouble(DebugAnnotation.DOUBLE_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** Adds a boolean debug annotation. */
  public EventContext arg(String name, boolean value) {
    if (openNamed(name)) {
      packet.appendBool(DebugAnnotation.BOOL_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** A string value; null is written as the string "NULL". */
  public EventContext arg(String name, String value) {
    if (openNamed(name)) {
      packet.appendString(DebugAnnotation.STRING_VALUE_FIELD_NUMBER, value == null ? "NULL" : value);
      packet.endNested();
    }
    return this;
  }

  /** Opens a dictionary value; entries follow until {@link #end}. */
  public EventContext beginDict(String name) {
    openNamed(name);
    push(IN_DICT);
    return this;
  }

  /** Opens an array value; elements ({@link #add}) follow until {@link #end}. */
  public EventContext beginArray(String name) {
    openNamed(name);
    push(IN_ARRAY);
    return this;
  }

  // ---- array elements ----

  /** Appends an integer to the array being built. */
  public EventContext add(long value) {
    if (openElement()) {
      packet.appendVarInt(DebugAnnotation.INT_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** Appends a floating-point value to the array being built. */
  public EventContext add(double value) {
    if (openElement()) {
      packet.appendDouble(DebugAnnotation.DOUBLE_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** Appends a boolean to the array being built. */
  public EventContext add(boolean value) {
    if (openElement()) {
      packet.appendBool(DebugAnnotation.BOOL_VALUE_FIELD_NUMBER, value);
      packet.endNested();
    }
    return this;
  }

  /** Appends a string to the array being built. */
  public EventContext add(String value) {
    if (openElement()) {
      packet.appendString(DebugAnnotation.STRING_VALUE_FIELD_NUMBER, value == null ? "NULL" : value);
      packet.endNested();
    }
    return this;
  }

  /** A dictionary as an array element. */
  public EventContext beginDict() {
    openElement();
    push(IN_DICT);
    return this;
  }

  /** An array as an array element. */
  public EventContext beginArray() {
    openElement();
    push(IN_ARRAY);
    return this;
  }

  /** Closes the innermost dictionary or array. */
  public EventContext end() {
    if (depth == 0) {
      throw new IllegalStateException("end() without an open dictionary or array");
    }
    depth--;
    if (!filtered) {
      packet.endNested();
    }
    return this;
  }

  // ---- flows ----

  /** Links this event into flow id (an arrow from the previous event with the same id). */
  public EventContext flow(long id) {
    requireEventLevel("flow");
    packet.appendFixed64(org.jperfetto.protos.TrackEvent.FLOW_IDS_FIELD_NUMBER, id);
    return this;
  }

  /** Ends flow id at this event; the id may be reused afterwards. */
  public EventContext terminatingFlow(long id) {
    requireEventLevel("terminatingFlow");
    packet.appendFixed64(org.jperfetto.protos.TrackEvent.TERMINATING_FLOW_IDS_FIELD_NUMBER, id);
    return this;
  }

  // ---- internals ----

  /** Opens a named annotation at the current level; false when annotations are filtered out. */
  private boolean openNamed(String name) {
    byte kind = kinds[depth];
    if (kind == IN_ARRAY) {
      throw new IllegalStateException("named value inside an array: name=" + name + " depth=" + depth);
    }
    if (filtered) {
      return false;
    }
    if (kind == IN_EVENT) {
      packet.beginNested(org.jperfetto.protos.TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER);
      int iid = sequence.intern(SequenceState.KIND_ANNOTATION_NAME, name);
      if (iid != 0) {
        packet.appendVarInt(DebugAnnotation.NAME_IID_FIELD_NUMBER, iid);
      } else {
        packet.appendString(DebugAnnotation.NAME_FIELD_NUMBER, name);
      }
    } else {
      packet.beginNested(DebugAnnotation.DICT_ENTRIES_FIELD_NUMBER);
      packet.appendString(DebugAnnotation.NAME_FIELD_NUMBER, name);
    }
    return true;
  }

  private boolean openElement() {
    if (kinds[depth] != IN_ARRAY) {
      throw new IllegalStateException("array element outside an array: depth=" + depth);
    }
    if (filtered) {
      return false;
    }
    packet.beginNested(DebugAnnotation.ARRAY_VALUES_FIELD_NUMBER);
    return true;
  }

  private void push(byte kind) {
    if (depth == MAX_DEPTH) {
      throw new IllegalStateException("debug annotations nested too deep: max=" + MAX_DEPTH);
    }
    kinds[++depth] = kind;
  }

  private void requireEventLevel(String what) {
    if (depth != 0) {
      throw new IllegalStateException(what + " inside a dictionary or array: depth=" + depth);
    }
  }

  /** Writes one of the inline arguments of a fixed-shape event. */
  void inlineArg(String name, int kind, long bits, String text) {
    switch (kind) {
      case TrackEventEncoder.ARG_LONG -> arg(name, bits);
      case TrackEventEncoder.ARG_DOUBLE -> arg(name, Double.longBitsToDouble(bits));
      case TrackEventEncoder.ARG_BOOL -> arg(name, bits != 0);
      case TrackEventEncoder.ARG_STRING -> arg(name, text);
      default -> throw new IllegalStateException("unknown argument kind: " + kind);
    }
  }
}
