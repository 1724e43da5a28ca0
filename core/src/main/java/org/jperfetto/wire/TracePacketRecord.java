package org.jperfetto.wire;

/**
 * A packet's record in a Perfetto trace file. The file is a serialized
 * {@code perfetto.protos.Trace}, so each packet is its field 1 (Trace.packet), length-delimited:
 * the tag byte {@code 0x0A}, the packet size as a varint, then the packet bytes. This class writes
 * the part before the bytes, the header, for every writer of trace files (the consumer's file
 * writer, the service's write_into_file drain and its compressor). Protobuf framing, nothing of the
 * SMB: so it sits in the wire toolkit, below all of them.
 */
public final class TracePacketRecord {
  /**
   * Trace.packet's field number. The one field number the toolkit holds, since it may not see the
   * generated classes; TracePacketRecordTest checks it against {@code Trace.PACKET_FIELD_NUMBER}.
   */
  public static final int PACKET_FIELD_NUMBER = 1;
  /** Trace.packet's tag: length-delimited. */
  public static final int PACKET_TAG = ProtoWire.makeTag(PACKET_FIELD_NUMBER, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
  /** The longest header: the tag and the varint of the largest int. */
  public static final int MAX_HEADER_SIZE = Varints.size(PACKET_TAG) + Varints.size(Integer.MAX_VALUE);

  private TracePacketRecord() {}

  /**
   * Writes the header of a packet of packetSize bytes at out[at..] (room for
   * {@link #MAX_HEADER_SIZE} bytes) and returns the index after it.
   *
   * @throws IllegalArgumentException if packetSize is negative
   */
  public static int putHeader(byte[] out, int at, int packetSize) {
    if (packetSize < 0) {
      throw new IllegalArgumentException("negative packet size: " + packetSize);
    }
    return Varints.put(out, Varints.put(out, at, PACKET_TAG), packetSize);
  }

  /** The header of a packet of packetSize bytes. */
  public static byte[] header(int packetSize) {
    byte[] out = new byte[MAX_HEADER_SIZE];
    return java.util.Arrays.copyOf(out, putHeader(out, 0, packetSize));
  }
}
