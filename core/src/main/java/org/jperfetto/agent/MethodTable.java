package org.jperfetto.agent;

import java.util.Arrays;

/** The names of instrumented methods, by the id their bytecode passes to the hooks. */
final class MethodTable {
  private volatile String[] names = new String[64];
  private int size;

  /** Adds name; returns its id. */
  synchronized int add(String name) {
    if (size == names.length) {
      names = Arrays.copyOf(names, size * 2);
    }
    String[] n = names;
    n[size] = name;
    names = n; // publishes the element to readers of the volatile array
    return size++;
  }

  /** The name of id (null if unknown). */
  String name(int id) {
    String[] n = names;
    return id >= 0 && id < n.length ? n[id] : null;
  }

  synchronized int size() {
    return size;
  }
}
