package org.jperfetto.service.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * The patches of one CommitData ChunkToPatch, as offsets into the chunk and each patch's bytes,
 * copied in here from wherever they were decoded (a request buffer read in place, or {@link Patch}
 * arrays). Reusable and growable: {@link #clear()} and refill it for the next chunk, so the in-place
 * CommitData path allocates nothing once it has seen its largest batch. Everything in it is
 * untrusted.
 *
 * <p>The bytes are copied (patches are a few bytes each) rather than referenced: the batch then
 * holds primitive arrays only, and the hot path stores no object reference whose type the JIT
 * would have to check.
 */
public final class PatchBatch {
  private long[] offsets = new long[8];
  private int[] dataOffsets = new int[8];
  private int[] lengths = new int[8];
  private byte[] data = new byte[64];
  private MemorySegment dataSegment = MemorySegment.ofArray(data);
  private int dataUsed;
  private int count;

  /** A batch holding patches (for callers that decoded a request into protobuf objects). */
  public static PatchBatch of(List<Patch> patches) {
    PatchBatch b = new PatchBatch();
    for (Patch p : patches) {
      byte[] bytes = p.data() != null ? p.data() : new byte[0];
      b.add(p.offsetUntrusted(), MemorySegment.ofArray(bytes), 0, bytes.length);
    }
    return b;
  }

  public void clear() {
    count = 0;
    dataUsed = 0;
  }

  /** Adds a patch: offsetUntrusted into the chunk payload, its bytes (copied) at [at, at + length) of src. */
  public void add(long offsetUntrusted, MemorySegment src, long at, int length) {
    if (count == offsets.length) {
      int n = count * 2;
      offsets = Arrays.copyOf(offsets, n);
      dataOffsets = Arrays.copyOf(dataOffsets, n);
      lengths = Arrays.copyOf(lengths, n);
    }
    if (length > data.length - dataUsed) {
      data = Arrays.copyOf(data, Math.max(data.length * 2, dataUsed + length));
      dataSegment = MemorySegment.ofArray(data);
    }
    MemorySegment.copy(src, ValueLayout.JAVA_BYTE, at, data, dataUsed, length);
    offsets[count] = offsetUntrusted;
    dataOffsets[count] = dataUsed;
    lengths[count] = length;
    dataUsed += length;
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
    return dataSegment;
  }

  public long sourceOffsetAt(int i) {
    return dataOffsets[i];
  }

  public int lengthAt(int i) {
    return lengths[i];
  }
}
