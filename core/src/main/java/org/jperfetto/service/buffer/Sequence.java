package org.jperfetto.service.buffer;

import java.util.Arrays;

/**
 * The chunks of one {producer id, writer id} sequence in a {@link TraceBuffer}: their chunk ids
 * and {@link ChunkTable} slots, sorted by chunk id as an unsigned number, in a ring so that the
 * usual operations (append the newest, drop the oldest) cost O(1). Positions are logical
 * (0 = smallest chunk id).
 */
final class Sequence {
  final int producerId;
  final int writerId;
  /**
   * Highest chunk id written, in wrap-around order (upstream's last_chunk_id_written): reading
   * starts just after it, so after chunk ids wrap 0xFFFFFFFF -> 0 the old high ids come first.
   */
  int lastChunkIdWritten;
  /** Whether any fragment was taken out of this sequence, and the newest chunk it came from. */
  boolean hasRead;
  int newestChunkIdRead;
  /**
   * Read position in the newest chunk read, kept when that chunk was incomplete (scraped) and
   * got overwritten: its final commit may bring the rest of it ({@code fragmentsRead < 0}: none kept).
   */
  int evictedFragmentsRead = -1;
  int evictedNextFragmentOffset;
  /** And whether a loss before its next packet was still unreported (its LAST_READ_SKIPPED). */
  boolean evictedLastReadSkipped;

  private int[] ids;
  private int[] slots;
  private int head;
  private int size;

  Sequence(int producerId, int writerId) {
    this.producerId = producerId;
    this.writerId = writerId;
    this.ids = new int[8];
    this.slots = new int[8];
  }

  Sequence(Sequence other) {
    this(other.producerId, other.writerId);
    lastChunkIdWritten = other.lastChunkIdWritten;
    hasRead = other.hasRead;
    newestChunkIdRead = other.newestChunkIdRead;
    evictedFragmentsRead = other.evictedFragmentsRead;
    evictedNextFragmentOffset = other.evictedNextFragmentOffset;
    evictedLastReadSkipped = other.evictedLastReadSkipped;
    ids = new int[other.ids.length];
    slots = new int[other.slots.length];
    for (int i = 0; i < other.size; i++) {
      ids[i] = other.idAt(i);
      slots[i] = other.slotAt(i);
    }
    size = other.size;
  }

  /** Records that a fragment of chunkId was taken out (read or skipped). */
  void noteRead(int chunkId) {
    if (!hasRead || chunkId - newestChunkIdRead > 0) {
      hasRead = true;
      newestChunkIdRead = chunkId;
      evictedFragmentsRead = -1;
    }
  }

  /**
   * True if chunkId is older (in wrap-around order) than a chunk the reader already took
   * fragments from: its packets can no longer come out in order.
   */
  boolean isBehindReader(int chunkId) {
    return hasRead && chunkId - newestChunkIdRead < 0;
  }

  /**
   * True if chunkId is the scraped chunk the reader was in when it was overwritten, and this
   * commit of it has more fragments than were read: the rest can still come out, in order.
   */
  boolean canReadmit(int chunkId, int numFragments) {
    return evictedFragmentsRead >= 0 && chunkId == newestChunkIdRead
        && numFragments > evictedFragmentsRead;
  }

  /**
   * True if the reader already got to chunkId or past it. For a chunk that is not in the buffer
   * (any more), this means its packets were read, at least in part, before it was overwritten.
   */
  boolean wasReachedByReader(int chunkId) {
    return hasRead && chunkId - newestChunkIdRead <= 0;
  }

  static int key(int producerId, int writerId) {
    return (producerId << 16) | writerId;
  }

  int key() {
    return key(producerId, writerId);
  }

  int size() {
    return size;
  }

  int idAt(int pos) {
    return ids[physical(pos)];
  }

  int slotAt(int pos) {
    return slots[physical(pos)];
  }

  /** Position of chunkId, or -(insertion point) - 1 when absent. */
  int find(int chunkId) {
    if (size == 0) {
      return -1;
    }
    // Fast paths: the newest chunk is appended at the end, the oldest overwritten at the front.
    int c = Integer.compareUnsigned(chunkId, idAt(size - 1));
    if (c >= 0) {
      return c == 0 ? size - 1 : -size - 1;
    }
    if (chunkId == idAt(0)) {
      return 0;
    }
    int lo = 0;
    int hi = size - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int cm = Integer.compareUnsigned(idAt(mid), chunkId);
      if (cm < 0) {
        lo = mid + 1;
      } else if (cm > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -lo - 1;
  }

  /** Position of the first chunk id greater (unsigned) than chunkId; size() if none. */
  int firstAfter(int chunkId) {
    int p = find(chunkId);
    return p >= 0 ? p + 1 : -p - 1;
  }

  void insert(int pos, int chunkId, int slot) {
    if (size == ids.length) {
      grow();
    }
    if (pos == size) {
      int at = physical(size);
      ids[at] = chunkId;
      slots[at] = slot;
    } else if (pos == 0) {
      head = (head - 1) & (ids.length - 1);
      ids[head] = chunkId;
      slots[head] = slot;
    } else {
      for (int i = size; i > pos; i--) {
        int to = physical(i);
        int from = physical(i - 1);
        ids[to] = ids[from];
        slots[to] = slots[from];
      }
      int at = physical(pos);
      ids[at] = chunkId;
      slots[at] = slot;
    }
    size++;
  }

  void remove(int pos) {
    if (pos == 0) {
      head = (head + 1) & (ids.length - 1);
    } else {
      for (int i = pos; i < size - 1; i++) {
        int to = physical(i);
        int from = physical(i + 1);
        ids[to] = ids[from];
        slots[to] = slots[from];
      }
    }
    size--;
  }

  private int physical(int pos) {
    return (head + pos) & (ids.length - 1);
  }

  /**
   * Doubles the ring, its entries moved to the front in order. Array copies rather than a loop: a
   * burst grows a sequence of a 256 MiB buffer to thousands of chunks while this may not be compiled
   * yet, on the service's loop thread, and an OSR compile of the old copy loop was seen right next to
   * a 3,400-slice gap in a cold burst.
   */
  private void grow() {
    int[] newIds = new int[ids.length * 2];
    int[] newSlots = new int[ids.length * 2];
    int firstPart = Math.min(size, ids.length - head); // from head to the end of the array
    System.arraycopy(ids, head, newIds, 0, firstPart);
    System.arraycopy(slots, head, newSlots, 0, firstPart);
    System.arraycopy(ids, 0, newIds, firstPart, size - firstPart);
    System.arraycopy(slots, 0, newSlots, firstPart, size - firstPart);
    ids = newIds;
    slots = newSlots;
    head = 0;
  }

  @Override
  public String toString() {
    int[] list = new int[size];
    for (int i = 0; i < size; i++) {
      list[i] = idAt(i);
    }
    return "Sequence{producer=" + producerId + " writer=" + writerId + " last=" + lastChunkIdWritten
        + " chunks=" + Arrays.toString(list) + "}";
  }
}
