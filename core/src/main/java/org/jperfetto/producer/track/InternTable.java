package org.jperfetto.producer.track;

import java.util.Arrays;

/**
 * Interning ids of one kind of string (event names, categories, debug annotation names) on one
 * sequence: open addressing over String keys, ids from 1 in first-use order. Lookups allocate
 * nothing (String caches its hash); the arrays grow only when a new string arrives. Past
 * {@link #MAX_ENTRIES} strings the table refuses more and the caller writes the string inline.
 */
final class InternTable {
  static final int MAX_ENTRIES = 1 << 16;
  private static final int INITIAL_CAPACITY = 64;

  private String[] keys = new String[INITIAL_CAPACITY];
  private int[] iids = new int[INITIAL_CAPACITY];
  private int size;
  /** The string last found (the very same object), and its iid: a trace point in a loop asks again. */
  private String lastFound;
  private int lastFoundIid;

  /** The iid of value, or 0 if it has none on this sequence yet. */
  int find(String value) {
    if (value == lastFound) {
      return lastFoundIid;
    }
    int mask = keys.length - 1;
    for (int i = spread(value.hashCode()) & mask; ; i = (i + 1) & mask) {
      String k = keys[i];
      if (k == null) {
        return 0;
      }
      if (k == value || k.equals(value)) {
        lastFound = value;
        lastFoundIid = iids[i];
        return lastFoundIid;
      }
    }
  }

  /** Gives value (not yet in the table) the next iid and returns it; 0 when the table is full. */
  int add(String value) {
    if (size == MAX_ENTRIES) {
      return 0;
    }
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    int iid = ++size;
    insert(keys, iids, value, iid);
    return iid;
  }

  int size() {
    return size;
  }

  /** Forgets every string (incremental state cleared); ids start again from 1. */
  void clear() {
    Arrays.fill(keys, null);
    size = 0;
    lastFound = null;
  }

  private void grow() {
    String[] newKeys = new String[keys.length * 2];
    int[] newIids = new int[keys.length * 2];
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != null) {
        insert(newKeys, newIids, keys[i], iids[i]);
      }
    }
    keys = newKeys;
    iids = newIids;
  }

  private static void insert(String[] keys, int[] iids, String value, int iid) {
    int mask = keys.length - 1;
    int i = spread(value.hashCode()) & mask;
    while (keys[i] != null) {
      i = (i + 1) & mask;
    }
    keys[i] = value;
    iids[i] = iid;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B9;
  }
}
