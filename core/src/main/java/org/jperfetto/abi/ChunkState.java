package org.jperfetto.abi;

/**
 * The 2-bit state of one chunk, as stored in its page's header bitmap. The numeric values are the ABI:
 * {@link #FREE} must be 0 so that zeroed shared memory reads as free, and {@link #COMPLETE} must be 3
 * so that a page whose chunk bits are all ones is complete.
 *
 * <p>Transitions (each one a CAS on the page header word):
 * <pre>
 *   FREE --producer--> BEING_WRITTEN --producer--> COMPLETE --service--> BEING_READ --service--> FREE
 * </pre>
 */
public enum ChunkState {
  /** Nobody owns the chunk; a producer may acquire it for writing. */
  FREE(0),
  /** A producer writer owns the chunk; the service only reads it when scraping on flush. */
  BEING_WRITTEN(1),
  /** The service is copying the chunk out; producers keep away. */
  BEING_READ(2),
  /** The producer finished; the service may acquire it for reading. */
  COMPLETE(3);

  private static final ChunkState[] BY_BITS = values();

  private final int bits;

  ChunkState(int bits) {
    this.bits = bits;
  }

  /** The 2-bit value stored in the page header. */
  public int bits() {
    return bits;
  }

  /** The state for a 2-bit value; every value 0..3 is a state. */
  public static ChunkState ofBits(int bits) {
    return BY_BITS[bits & PageHeader.CHUNK_STATE_MASK];
  }
}
