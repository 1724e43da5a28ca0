package org.jperfetto.producer.proto;

import org.jperfetto.wire.Varints;

/**
 * Sizes that could not be written in place because their chunk was already handed back: each entry
 * is (chunk id, offset in the chunk payload, 4 size bytes), in the order they were annotated, to be
 * sent with CommitData's chunks_to_patch. An entry's 4 bytes stay zero until the message ends; a
 * written size is a redundant varint whose first byte is never 0, so "patched" is "byte 0 != 0".
 *
 * <p>Entries are named by a sequence number that stays valid while the entry is in the list, so
 * the list can grow without invalidating what the {@link ProtoWriter} holds. No allocation unless
 * the list outgrows its capacity.
 */
public final class PatchList {
  /** Largest payload offset a patch can name (upstream's offset is a uint16). */
  public static final int MAX_OFFSET = 0xFFFF;

  private int[] chunkIds;
  private int[] offsets;
  private int[] sizeFields; // 4 bytes each, packed little-endian (byte 0 lowest)
  private int mask;
  private long head; // sequence number of the front entry
  private long tail; // sequence number the next entry gets

  public PatchList() {
    this(16);
  }

  public PatchList(int initialCapacity) {
    int capacity = Integer.highestOneBit(Math.max(2, initialCapacity) - 1) << 1;
    allocate(capacity);
  }

  private void allocate(int capacity) {
    chunkIds = new int[capacity];
    offsets = new int[capacity];
    sizeFields = new int[capacity];
    mask = capacity - 1;
  }

  /**
   * Adds an unpatched entry for the 4 bytes at offset of chunk chunkId's payload and returns its
   * sequence number, for {@link #fill}.
   */
  public long annotate(int chunkId, int offset) {
    if (offset < 0 || offset > MAX_OFFSET) {
      throw new IllegalArgumentException("patch offset out of chunk: chunk=" + Integer.toUnsignedString(chunkId)
          + " offset=" + offset);
    }
    if (tail - head > mask) {
      grow();
    }
    int i = (int) tail & mask;
    chunkIds[i] = chunkId;
    offsets[i] = offset;
    sizeFields[i] = 0;
    return tail++;
  }

  private void grow() {
    int[] oldChunks = chunkIds;
    int[] oldOffsets = offsets;
    int[] oldSizes = sizeFields;
    int oldMask = mask;
    allocate((mask + 1) * 2);
    for (long seq = head; seq < tail; seq++) {
      int from = (int) seq & oldMask;
      int to = (int) seq & mask;
      chunkIds[to] = oldChunks[from];
      offsets[to] = oldOffsets[from];
      sizeFields[to] = oldSizes[from];
    }
  }

  /** Writes size as a 4-byte redundant varint into the entry with sequence number seq. */
  public void fill(long seq, int size) {
    if (seq < head || seq >= tail) {
      throw new IllegalStateException("no such patch: seq=" + seq + " head=" + head + " tail=" + tail);
    }
    if (size < 0 || size > Varints.MAX_REDUNDANT) {
      throw new IllegalArgumentException("size does not fit a 4-byte varint: size=" + size);
    }
    sizeFields[(int) seq & mask] = Varints.redundant(size);
  }

  public boolean isEmpty() {
    return head == tail;
  }

  public int size() {
    return (int) (tail - head);
  }

  /** Whether the front entry has its size written (so it may be sent). */
  public boolean frontIsPatched() {
    return !isEmpty() && (sizeFields[(int) head & mask] & 0xFF) != 0;
  }

  public int frontChunkId() {
    return chunkIds[frontIndex()];
  }

  public int frontOffset() {
    return offsets[frontIndex()];
  }

  /** The front entry's 4 size bytes, packed little-endian (byte 0 in the low 8 bits). */
  public int frontSizeField() {
    return sizeFields[frontIndex()];
  }

  /** Copies the front entry's 4 size bytes into dst at offset. */
  public void frontSizeField(byte[] dst, int offset) {
    int v = frontSizeField();
    for (int i = 0; i < Varints.REDUNDANT_SIZE; i++) {
      dst[offset + i] = (byte) (v >>> (8 * i));
    }
  }

  public void popFront() {
    frontIndex();
    head++;
  }

  private int frontIndex() {
    if (isEmpty()) {
      throw new IllegalStateException("patch list is empty");
    }
    return (int) head & mask;
  }
}
