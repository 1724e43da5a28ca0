package org.jperfetto.abi;

/**
 * Protobuf base-128 varints: the one place that says how many bytes a varint takes (the producer's
 * packet writer, the IPC layer's hand-encoded replies and the service's all ask here), and a writer
 * into byte arrays for the service's hand-encoded messages (trusted packet fields, ReadBuffers
 * replies). An int value is widened to long first, so a negative int32 takes ten bytes, as
 * protobuf encodes it.
 */
public final class Varints {
  private Varints() {}

  /** Bytes the varint of v (taken as unsigned 64-bit) takes, 1 to 10. */
  public static int size(long v) {
    // 1 byte per started group of 7 significant bits (0 still takes one byte): ceil(bits / 7) for
    // bits = 64 - nlz, as a multiply and a shift, which is exact for every nlz from 0 to 63.
    return (640 - 9 * Long.numberOfLeadingZeros(v | 1)) >>> 6;
  }

  /** Writes v's varint at out[at..] and returns the index after it. */
  public static int put(byte[] out, int at, long v) {
    while ((v & ~0x7fL) != 0) {
      out[at++] = (byte) (v & 0x7f | 0x80);
      v >>>= 7;
    }
    out[at++] = (byte) v;
    return at;
  }
}
