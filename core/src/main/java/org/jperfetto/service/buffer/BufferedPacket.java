package org.jperfetto.service.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A reusable holder for one packet read out of a {@link TraceBuffer}: its slices (a packet
 * fragmented across chunks has one slice per fragment) and the properties of its sequence, which
 * the service turns into trusted_uid, trusted_pid and trusted_packet_sequence_id.
 *
 * <p>The slices point into the buffer's memory: they are valid until the next call that changes
 * the buffer (copy, patch, close). Reuse one holder for a whole read: after its arrays have grown
 * to the largest packet, reading allocates nothing.
 */
public final class BufferedPacket {
  private MemorySegment segment = MemorySegment.NULL;
  private long[] offsets = new long[4];
  private int[] lengths = new int[4];
  private int sliceCount;
  private long size;

  private int producerId;
  private int uid;
  private int pid;
  private int machineId;
  private int writerId;
  private boolean previousPacketDropped;

  /** The memory every slice lies in. */
  public MemorySegment segment() {
    return segment;
  }

  public int sliceCount() {
    return sliceCount;
  }

  public long sliceOffset(int i) {
    return offsets[checkIndex(i)];
  }

  public int sliceLength(int i) {
    return lengths[checkIndex(i)];
  }

  /** The i-th slice as a segment view (allocates a small view object). */
  public MemorySegment slice(int i) {
    return segment.asSlice(offsets[checkIndex(i)], lengths[i]);
  }

  /** Total packet size: the sum of the slice lengths. */
  public long size() {
    return size;
  }

  /** Producer id of the writer (trusted: given by the service when the chunk was copied). */
  public int producerId() {
    return producerId;
  }

  public int uid() {
    return uid;
  }

  public int pid() {
    return pid;
  }

  /** Machine id of the producer (trusted; 0: the service's own machine). */
  public int machineId() {
    return machineId;
  }

  /** Writer id, unique within the producer: with the producer id it names the sequence. */
  public int writerId() {
    return writerId;
  }

  /**
   * True when data may have been lost on this sequence just before this packet: the packet before
   * it was overwritten, skipped (missing fragment, bad fragment, drop marker), or this is the
   * first packet read from the sequence (upstream's TraceBufferV1 semantics).
   */
  public boolean previousPacketDropped() {
    return previousPacketDropped;
  }

  /** Copies the packet's bytes, slice after slice, into dst at dstOffset. */
  public void copyTo(MemorySegment dst, long dstOffset) {
    long at = dstOffset;
    for (int i = 0; i < sliceCount; i++) {
      MemorySegment.copy(segment, offsets[i], dst, at, lengths[i]);
      at += lengths[i];
    }
  }

  /** The packet's bytes in a new array (for tests and slow paths). */
  public byte[] toByteArray() {
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("packet too large for a byte[]: size=" + size);
    }
    byte[] out = new byte[(int) size];
    int at = 0;
    for (int i = 0; i < sliceCount; i++) {
      MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offsets[i], out, at, lengths[i]);
      at += lengths[i];
    }
    return out;
  }

  void reset(MemorySegment buffer) {
    segment = buffer;
    sliceCount = 0;
    size = 0;
    producerId = 0;
    uid = 0;
    pid = 0;
    machineId = 0;
    writerId = 0;
    previousPacketDropped = false;
  }

  void clearSlices() {
    sliceCount = 0;
    size = 0;
  }

  void addSlice(long offset, int length) {
    if (sliceCount == offsets.length) {
      offsets = Arrays.copyOf(offsets, sliceCount * 2);
      lengths = Arrays.copyOf(lengths, sliceCount * 2);
    }
    offsets[sliceCount] = offset;
    lengths[sliceCount] = length;
    sliceCount++;
    size += length;
  }

  void setSequence(int producerId, int uid, int pid, int machineId, int writerId,
      boolean previousPacketDropped) {
    this.producerId = producerId;
    this.uid = uid;
    this.pid = pid;
    this.machineId = machineId;
    this.writerId = writerId;
    this.previousPacketDropped = previousPacketDropped;
  }

  private int checkIndex(int i) {
    return java.util.Objects.checkIndex(i, sliceCount);
  }

  @Override
  public String toString() {
    return "BufferedPacket{producer=" + producerId + " writer=" + writerId + " uid=" + uid + " pid="
        + pid + " machine=" + machineId + " dropped=" + previousPacketDropped + " slices=" + sliceCount
        + " size=" + size + "}";
  }
}
