package org.jperfetto.producer.track;

import java.util.Objects;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.CounterDescriptor;
import org.jperfetto.protos.TrackDescriptor;
import org.jperfetto.wire.Varints;

/**
 * A custom track, child of this process's track: a named track for slices and instants off the
 * thread's own track, or a counter track for {@link TrackEvent#counter} values. Each sequence writes
 * a track's TrackDescriptor once (again after incremental state is cleared) before its first event.
 * Create tracks once and keep them; the uuid derives from the process and the name (and id).
 */
public final class Track {
  /** Units trace_processor knows for counter values (CounterDescriptor.Unit). */
  public enum Unit {
    /** No unit: plain numbers. */
    UNSPECIFIED(CounterDescriptor.Unit.UNIT_UNSPECIFIED_VALUE),
    /** Nanoseconds. */
    TIME_NS(CounterDescriptor.Unit.UNIT_TIME_NS_VALUE),
    /** A count of things. */
    COUNT(CounterDescriptor.Unit.UNIT_COUNT_VALUE),
    /** Bytes. */
    SIZE_BYTES(CounterDescriptor.Unit.UNIT_SIZE_BYTES_VALUE);

    final int protoValue;

    Unit(int protoValue) {
      this.protoValue = protoValue;
    }
  }

  private final long uuid;
  private final String name;
  private final boolean counter;
  private final Unit unit;
  // The uuid as a varint, for the counter packets assembled in registers (ThreadState).
  private final int uuidVarIntSize;
  private final long uuidVarIntLowBits;
  private final long uuidVarIntHighBits;

  private Track(String name, long id, boolean counter, Unit unit) {
    this(ProcessInfo.current().childUuid(name, id, counter), name, counter, unit);
  }

  private Track(long uuid, String name, boolean counter, Unit unit) {
    this.name = Objects.requireNonNull(name, "name");
    this.counter = counter;
    this.unit = Objects.requireNonNull(unit, "unit");
    this.uuid = uuid;
    this.uuidVarIntSize = Varints.size(uuid);
    this.uuidVarIntLowBits = Varints.packedLow(uuid);
    this.uuidVarIntHighBits = Varints.packedHigh(uuid);
  }

  /** A named track for slices and instants. */
  public static Track named(String name) {
    return new Track(name, 0, false, Unit.UNSPECIFIED);
  }

  /** One of several named tracks with the same name, told apart by id (e.g. overlapping requests). */
  public static Track named(String name, long id) {
    return new Track(name, id, false, Unit.UNSPECIFIED);
  }

  /**
   * The track of virtual thread t's slices and instants, a child of the process track: Perfetto
   * has no thread id for a virtual thread, so it gets a track of its own, named as Java names the
   * thread (its name, else "VirtualThread#" and its id). The uuid derives from the thread id only,
   * so every event of the thread lands on one track whatever its name does meanwhile.
   */
  static Track ofVirtualThread(Thread t) {
    String name = t.getName();
    return new Track(ProcessInfo.current().virtualThreadUuid(t.threadId()),
        name.isEmpty() ? "VirtualThread#" + t.threadId() : name, false, Unit.UNSPECIFIED);
  }

  /** A counter track. */
  public static Track counter(String name) {
    return new Track(name, 0, true, Unit.UNSPECIFIED);
  }

  /** A counter track whose values are in unit. */
  public static Track counter(String name, Unit unit) {
    return new Track(name, 0, true, unit);
  }

  /** The track's uuid in the trace (TrackDescriptor.uuid). */
  public long uuid() {
    return uuid;
  }

  /** Bytes of the uuid's varint (1 to 10). */
  int uuidVarIntSize() {
    return uuidVarIntSize;
  }

  /** The uuid varint's first eight bytes, little-endian ({@link Varints#packedLow}). */
  long uuidVarIntLowBits() {
    return uuidVarIntLowBits;
  }

  /** The uuid varint's ninth and tenth bytes, little-endian; 0 when it has eight or fewer. */
  long uuidVarIntHighBits() {
    return uuidVarIntHighBits;
  }

  /** The name shown for the track. */
  public String name() {
    return name;
  }

  /** Whether the track holds counter values (else slices and instants). */
  public boolean isCounter() {
    return counter;
  }

  /** The unit of a counter track's values. */
  public Unit unit() {
    return unit;
  }

  /** Writes this track's TrackDescriptor into packet (a child of the process track). */
  void writeDescriptor(ProtoWriter packet, long processUuid) {
    packet.beginNested(org.jperfetto.protos.TracePacket.TRACK_DESCRIPTOR_FIELD_NUMBER);
    packet.appendVarInt(TrackDescriptor.UUID_FIELD_NUMBER, uuid);
    packet.appendVarInt(TrackDescriptor.PARENT_UUID_FIELD_NUMBER, processUuid);
    packet.appendString(TrackDescriptor.STATIC_NAME_FIELD_NUMBER, name);
    if (counter) {
      packet.beginNested(TrackDescriptor.COUNTER_FIELD_NUMBER);
      if (unit != Unit.UNSPECIFIED) {
        packet.appendVarInt(CounterDescriptor.UNIT_FIELD_NUMBER, unit.protoValue);
      }
      packet.endNested();
    }
    packet.endNested();
  }

  @Override
  public String toString() {
    return (counter ? "CounterTrack(" : "Track(") + name + " uuid=" + Long.toUnsignedString(uuid) + ")";
  }
}
