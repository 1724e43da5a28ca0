package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.PacketFragments;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * The size header of the TracePacket fragment being written, for the TraceWriter: 4 zeroed bytes
 * reserved in front of the fragment, filled in when the fragment ends. A fragment that ends in its
 * chunk with fewer than 127 bytes gets a 1-byte size (its bytes move back 3), as upstream v58 does;
 * a fragment cut at a chunk boundary, or continued from the previous chunk, keeps 4 bytes.
 * Allocation-free; one per TraceWriter.
 */
public final class PacketFragment {
  private final ScatteredStreamWriter stream;
  private MemorySegment sizeFieldSegment;
  private long sizeField = -1;
  private long start;

  public PacketFragment(ScatteredStreamWriter stream) {
    this.stream = java.util.Objects.requireNonNull(stream, "stream");
  }

  /**
   * Starts a fragment at the write position: reserves and zeroes its 4-byte size header (which may
   * take a new range first, so a caller that wants the header in the current chunk checks
   * {@link ScatteredStreamWriter#bytesAvailable()} before).
   */
  public void begin() {
    long field = stream.reserveBytes(PacketFragments.SIZE_FIELD_BYTES);
    stream.segment().set(ProtoWire.INT_LE, field, 0);
    sizeFieldSegment = stream.segment();
    sizeField = field;
    start = stream.written();
  }

  /**
   * Starts the continuation of a packet in a new chunk, from the delegate's getNewBuffer: the
   * header was zeroed by the caller at (segment, offset), just before the range given to the stream
   * (so call this after {@link ScatteredStreamWriter#reset}).
   */
  public void beginContinuation(MemorySegment segment, long offset) {
    segment.set(ProtoWire.INT_LE, offset, 0);
    sizeFieldSegment = segment;
    sizeField = offset;
    start = stream.written();
  }

  /** Whether a fragment is open (begun and not yet ended). */
  public boolean isOpen() {
    return sizeField >= 0;
  }

  /** Bytes written in this fragment so far. */
  public int size() {
    return (int) (stream.written() - start);
  }

  /** Ends the fragment, compacting its size when it is short and stayed in the current range. */
  public int end() {
    int size = checkedSize();
    stream.backfillSize(sizeFieldSegment, sizeField, size, PacketFragments.MAX_COMPACT_SIZE);
    sizeField = -1;
    return size;
  }

  /** Ends the fragment at a chunk boundary (the packet goes on in the next chunk): 4-byte size. */
  public int endAtChunkBoundary() {
    int size = checkedSize();
    Varints.writeRedundant(sizeFieldSegment, sizeField, size);
    sizeField = -1;
    return size;
  }

  /** Ends the fragment with the drop-packet marker (2^28 - 1): the service discards the packet. */
  public void endAsDropped() {
    checkOpen();
    Varints.writeRedundant(sizeFieldSegment, sizeField, PacketFragments.DROP_PACKET_MARKER);
    sizeField = -1;
  }

  private int checkedSize() {
    checkOpen();
    long size = stream.written() - start;
    if (size >= PacketFragments.DROP_PACKET_MARKER) {
      throw new IllegalStateException("packet fragment too long: size=" + size);
    }
    return (int) size;
  }

  private void checkOpen() {
    if (sizeField < 0) {
      throw new IllegalStateException("no packet fragment open");
    }
  }
}
