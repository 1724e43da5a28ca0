package org.jperfetto.producer.track;

import java.util.Arrays;

/**
 * Track uuids whose TrackDescriptor a sequence already carries: open addressing over longs, 0 is
 * the empty slot (no track has uuid 0). Allocates only to grow.
 */
final class UuidSet {
  private long[] slots = new long[32];
  private int size;

  boolean contains(long uuid) {
    int mask = slots.length - 1;
    for (int i = spread(uuid) & mask; ; i = (i + 1) & mask) {
      long s = slots[i];
      if (s == uuid) {
        return true;
      }
      if (s == 0) {
        return false;
      }
    }
  }

  /** Adds uuid; returns false if it was there. */
  boolean add(long uuid) {
    if (uuid == 0) {
      throw new IllegalArgumentException("track uuid 0 is reserved");
    }
    if (contains(uuid)) {
      return false;
    }
    if (2 * (size + 1) > slots.length) {
      long[] old = slots;
      slots = new long[old.length * 2];
      for (long s : old) {
        if (s != 0) {
          insert(slots, s);
        }
      }
    }
    insert(slots, uuid);
    size++;
    return true;
  }

  void clear() {
    Arrays.fill(slots, 0);
    size = 0;
  }

  int size() {
    return size;
  }

  private static void insert(long[] slots, long uuid) {
    int mask = slots.length - 1;
    int i = spread(uuid) & mask;
    while (slots[i] != 0) {
      i = (i + 1) & mask;
    }
    slots[i] = uuid;
  }

  private static int spread(long v) {
    long h = v * 0x9E3779B97F4A7C15L;
    return (int) (h >>> 32);
  }
}
