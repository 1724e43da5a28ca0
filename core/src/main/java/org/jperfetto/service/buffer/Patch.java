package org.jperfetto.service.buffer;

import org.jperfetto.abi.PacketFragments;

/**
 * One out-of-band patch for a chunk already in the buffer (CommitDataRequest.ChunkToPatch.Patch).
 *
 * @param offsetUntrusted offset from the start of the chunk payload (0 = first byte of the first
 *     fragment's size field), as sent by the producer
 * @param data the bytes to write; a patch is exactly 4 bytes, anything else makes the patch fail
 */
public record Patch(long offsetUntrusted, byte[] data) {
  /** Patch size in bytes (a fragment's redundant 4-byte size varint). */
  public static final int SIZE = PacketFragments.SIZE_FIELD_BYTES;
}
