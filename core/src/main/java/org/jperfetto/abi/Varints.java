package org.jperfetto.abi;

/**
 * Protobuf base-128 varints written into byte arrays, for the service's hand-encoded messages
 * (trusted packet fields, ReadBuffers replies). An int value is widened to long first, so a
 * negative int32 takes ten bytes, as protobuf encodes it.
 */
public final class Varints {
  private Varints() {}

  /** Bytes the varint of v takes, 1 to 10. */
  public static int size(long v) {
    return v == 0 ? 1 : (64 - Long.numberOfLeadingZeros(v) + 6) / 7;
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
