package org.jperfetto.abi;

/**
 * A packet's record in a Perfetto trace file. The file is a serialized
 * {@code perfetto.protos.Trace}, so each packet is its field 1 (Trace.packet), length-delimited:
 * the tag byte {@code 0x0A}, the packet size as a varint, then the packet bytes. This class writes
 * the part before the bytes, the header, for every writer of trace files (the consumer's file
 * writer, the service's write_into_file drain and its compressor).
 */
public final class TracePacketRecord {
  /** Field 1 (Trace.packet), wire type 2 (length-delimited). */
  public static final int PACKET_TAG = (1 << 3) | 2;
  /** The longest header: the tag and a 5-byte varint. */
  public static final int MAX_HEADER_SIZE = 1 + 5;

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
    out[at] = (byte) PACKET_TAG;
    return Varints.put(out, at + 1, packetSize);
  }

  /** The header of a packet of packetSize bytes. */
  public static byte[] header(int packetSize) {
    byte[] out = new byte[MAX_HEADER_SIZE];
    return java.util.Arrays.copyOf(out, putHeader(out, 0, packetSize));
  }
}
