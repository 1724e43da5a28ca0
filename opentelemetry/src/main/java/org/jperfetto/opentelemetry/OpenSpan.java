package org.jperfetto.opentelemetry;

import java.util.Arrays;

/**
 * What the processor keeps of a span while it is open: when and where it started, its in-process
 * parent's entry (null: no such parent, or one started before the session), and the flow ids of
 * its children that ended elsewhere first, for its own begin to start.
 */
final class OpenSpan {
  private static final long[] NONE = new long[0];

  final long startNanos;
  final Thread startThread;
  final OpenSpan parent;
  private long[] childFlows = NONE;
  private int childCount;
  private boolean ended;

  OpenSpan(long startNanos, Thread startThread, OpenSpan parent) {
    this.startNanos = startNanos;
    this.startThread = startThread;
    this.parent = parent;
  }

  /**
   * Adds a child's flow id for this span's begin to start; false if this span was written already
   * (the child then continues the flow of this span's own id).
   */
  synchronized boolean tryAddChildFlow(long flow) {
    if (ended) {
      return false;
    }
    if (childCount == childFlows.length) {
      childFlows = Arrays.copyOf(childFlows, Math.max(4, childCount * 2));
    }
    childFlows[childCount++] = flow;
    return true;
  }

  /** Marks the span written; the children's flow ids so far. */
  synchronized long[] end() {
    ended = true;
    return childCount == 0 ? NONE : Arrays.copyOf(childFlows, childCount);
  }
}
