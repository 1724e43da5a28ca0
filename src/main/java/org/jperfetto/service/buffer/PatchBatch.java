package org.jperfetto.service.buffer;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * The patches of one CommitData ChunkToPatch, as offsets into the chunk and where each patch's
 * bytes are (in a request buffer read in place, or in {@link Patch} arrays). Reusable and growable:
 * {@link #clear()} and refill it for the next chunk, so the in-place CommitData path allocates
 * nothing once it has seen its largest batch. Everything in it is untrusted.
 */
public final class PatchBatch {
  private long[] offsets = new long[8];
  private MemorySegment[] sources = new MemorySegment[8];
  private long[] sourceOffsets = new long[8];
  private int[] lengths = new int[8];
  private int count;

  /** A batch holding patches (for callers that decoded a request into protobuf objects). */
  public static PatchBatch of(List<Patch> patches) {
    PatchBatch b = new PatchBatch();
    for (Patch p : patches) {
      byte[] data = p.data() != null ? p.data() : new byte[0];
      b.add(p.offsetUntrusted(), MemorySegment.ofArray(data), 0, data.length);
    }
    return b;
  }

  public void clear() {
    Arrays.fill(sources, 0, count, null);
    count = 0;
  }

  /** Adds a patch: offsetUntrusted into the chunk payload, its bytes at [at, at + length) of src. */
  public void add(long offsetUntrusted, MemorySegment src, long at, int length) {
    if (count == offsets.length) {
      int n = count * 2;
      offsets = Arrays.copyOf(offsets, n);
      sources = Arrays.copyOf(sources, n);
      sourceOffsets = Arrays.copyOf(sourceOffsets, n);
      lengths = Arrays.copyOf(lengths, n);
    }
    offsets[count] = offsetUntrusted;
    sources[count] = src;
    sourceOffsets[count] = at;
    lengths[count] = length;
    count++;
  }

  public int count() {
    return count;
  }

  /** Patch i's offset into the chunk payload, as sent. */
  public long offsetAt(int i) {
    return offsets[i];
  }

  /** Where patch i's bytes are: in sourceAt(i) from sourceOffsetAt(i), lengthAt(i) of them. */
  public MemorySegment sourceAt(int i) {
    return sources[i];
  }

  public long sourceOffsetAt(int i) {
    return sourceOffsets[i];
  }

  public int lengthAt(int i) {
    return lengths[i];
  }
}
