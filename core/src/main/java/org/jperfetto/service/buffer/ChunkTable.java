package org.jperfetto.service.buffer;

import java.util.Arrays;

/**
 * Metadata of the chunks currently in a {@link TraceBuffer}, one slot per chunk, kept in parallel
 * primitive arrays so that copying and reading allocate nothing once the arrays have grown to the
 * buffer's working set. Freed slots are reused (LIFO).
 */
final class ChunkTable {
  /** The chunk was Complete when copied; reading a sequence never goes past an incomplete one. */
  static final byte COMPLETE = 1;
  /**
   * A loss before the next packet of this chunk is not reported yet: the last fragment taken out
   * was skipped (lost), or was an empty packet taken out after such a loss. Reading resumes with
   * previous-packet-dropped set from it, so a loss stays flagged across read passes.
   */
  static final byte LAST_READ_SKIPPED = 2;

  long[] recordOffset;
  int[] numFragments;
  int[] fragmentsRead;
  /** Offset, from the payload start, of the next fragment to read. */
  int[] nextFragmentOffset;
  byte[] flags;
  byte[] state;
  int[] uid;
  int[] pid;
  /** Trusted machine id of the producer (0: the service's own machine). */
  int[] machine;

  private int[] free;
  private int freeCount;
  private int highWater;

  ChunkTable(int capacity) {
    int c = Math.max(capacity, 16);
    recordOffset = new long[c];
    numFragments = new int[c];
    fragmentsRead = new int[c];
    nextFragmentOffset = new int[c];
    flags = new byte[c];
    state = new byte[c];
    uid = new int[c];
    pid = new int[c];
    machine = new int[c];
    free = new int[c];
  }

  ChunkTable(ChunkTable other) {
    recordOffset = other.recordOffset.clone();
    numFragments = other.numFragments.clone();
    fragmentsRead = other.fragmentsRead.clone();
    nextFragmentOffset = other.nextFragmentOffset.clone();
    flags = other.flags.clone();
    state = other.state.clone();
    uid = other.uid.clone();
    pid = other.pid.clone();
    machine = other.machine.clone();
    free = other.free.clone();
    freeCount = other.freeCount;
    highWater = other.highWater;
  }

  int allocate() {
    if (freeCount > 0) {
      return free[--freeCount];
    }
    if (highWater == recordOffset.length) {
      grow();
    }
    return highWater++;
  }

  void release(int slot) {
    free[freeCount++] = slot;
  }

  boolean isComplete(int slot) {
    return (state[slot] & COMPLETE) != 0;
  }

  void setComplete(int slot, boolean complete) {
    state[slot] = (byte) (complete ? state[slot] | COMPLETE : state[slot] & ~COMPLETE);
  }

  boolean lastReadSkipped(int slot) {
    return (state[slot] & LAST_READ_SKIPPED) != 0;
  }

  void setLastReadSkipped(int slot, boolean skipped) {
    state[slot] = (byte) (skipped ? state[slot] | LAST_READ_SKIPPED : state[slot] & ~LAST_READ_SKIPPED);
  }

  private void grow() {
    int c = recordOffset.length * 2;
    recordOffset = Arrays.copyOf(recordOffset, c);
    numFragments = Arrays.copyOf(numFragments, c);
    fragmentsRead = Arrays.copyOf(fragmentsRead, c);
    nextFragmentOffset = Arrays.copyOf(nextFragmentOffset, c);
    flags = Arrays.copyOf(flags, c);
    state = Arrays.copyOf(state, c);
    uid = Arrays.copyOf(uid, c);
    pid = Arrays.copyOf(pid, c);
    machine = Arrays.copyOf(machine, c);
    free = Arrays.copyOf(free, c);
  }
}
