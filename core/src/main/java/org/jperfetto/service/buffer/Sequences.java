package org.jperfetto.service.buffer;

import java.util.Arrays;

/**
 * All sequences a {@link TraceBuffer} has seen, sorted by {producer id, writer id}: the order in
 * which the reader visits them. Like upstream, a sequence is kept after its chunks are gone (it
 * remembers the last chunk id written); there is one per writer that ever wrote, a small number.
 */
final class Sequences {
  private int[] keys = new int[8];
  private Sequence[] list = new Sequence[8];
  private int count;
  /**
   * The sequence of the last lookup; before the first one, a sequence no writer has (ids are
   * unsigned 16-bit), so that the hot lookup has no null branch for the JIT to leave out and
   * trap on when a new buffer sees its first chunk.
   */
  private Sequence last = NONE;
  private static final Sequence NONE = new Sequence(-1, -1);

  Sequences() {}

  Sequences(Sequences other) {
    keys = other.keys.clone();
    list = new Sequence[other.list.length];
    count = other.count;
    for (int i = 0; i < count; i++) {
      list[i] = new Sequence(other.list[i]);
    }
  }

  int count() {
    return count;
  }

  Sequence at(int index) {
    return list[index];
  }

  /** The sequence, or null if this writer never wrote here. */
  Sequence get(int producerId, int writerId) {
    Sequence s = last;
    if (s.producerId == producerId && s.writerId == writerId) {
      return s;
    }
    int i = Arrays.binarySearch(keys, 0, count, Sequence.key(producerId, writerId));
    if (i < 0) {
      return null;
    }
    last = list[i];
    return last;
  }

  Sequence getOrCreate(int producerId, int writerId) {
    Sequence s = get(producerId, writerId);
    if (s != null) {
      return s;
    }
    int key = Sequence.key(producerId, writerId);
    int at = -Arrays.binarySearch(keys, 0, count, key) - 1;
    if (count == keys.length) {
      keys = Arrays.copyOf(keys, count * 2);
      list = Arrays.copyOf(list, count * 2);
    }
    System.arraycopy(keys, at, keys, at + 1, count - at);
    System.arraycopy(list, at, list, at + 1, count - at);
    s = new Sequence(producerId, writerId);
    keys[at] = key;
    list[at] = s;
    count++;
    last = s;
    return s;
  }
}
