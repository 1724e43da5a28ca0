package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;

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
  private int declaredSize = -1; // >= 0: the size went out up front as 1 byte (beginSized)

  public PacketFragment(ScatteredStreamWriter stream) {
    this.stream = java.util.Objects.requireNonNull(stream, "stream");
  }

  /**
   * Starts a fragment at the write position: reserves and zeroes its 4-byte size header (which may
   * take a new range first, so a caller that wants the header in the current chunk checks
   * {@link ScatteredStreamWriter#bytesAvailable()} before).
   */
  public void begin() {
    declaredSize = -1;
    long field = stream.reserveBytes(ProtoWire.MESSAGE_LENGTH_FIELD_SIZE);
    stream.segment().set(ProtoWire.INT_LE, field, 0);
    sizeFieldSegment = stream.segment();
    sizeField = field;
    start = stream.written();
  }

  /**
   * Starts a fragment whose size the caller knows, at most {@link ProtoWire#MAX_ONE_BYTE_FRAGMENT_SIZE}
   * bytes, and which fits the current range after its header (the caller checks
   * {@link ScatteredStreamWriter#bytesAvailable()} &gt; size): the size goes out now as the 1 byte
   * that compaction would have left, so {@link #end} moves nothing; it checks the size instead.
   */
  public void beginSized(int size) {
    if (size < 0 || size > ProtoWire.MAX_ONE_BYTE_FRAGMENT_SIZE || stream.bytesAvailable() <= size) {
      throw new IllegalArgumentException("sized fragment does not fit a 1-byte size in the range: size=" + size
          + " available=" + stream.bytesAvailable());
    }
    stream.writeByte(size);
    sizeFieldSegment = null;
    sizeField = 0;
    declaredSize = size;
    start = stream.written();
  }

  /**
   * Starts the continuation of a packet in a new chunk, from the delegate's getNewBuffer: the
   * header was zeroed by the caller at (segment, offset), just before the range given to the stream
   * (so call this after {@link ScatteredStreamWriter#reset}).
   */
  public void beginContinuation(MemorySegment segment, long offset) {
    declaredSize = -1;
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
    if (declaredSize >= 0) {
      return endSized(size);
    }
    stream.backfillSize(sizeFieldSegment, sizeField, size, ProtoWire.MAX_ONE_BYTE_FRAGMENT_SIZE);
    sizeField = -1;
    return size;
  }

  private int endSized(int size) {
    int declared = declaredSize;
    declaredSize = -1;
    sizeField = -1;
    if (size != declared) {
      throw new IllegalStateException("packet size differs from the declared one: declared=" + declared
          + " written=" + size);
    }
    return size;
  }

  /** Ends the fragment at a chunk boundary (the packet goes on in the next chunk): 4-byte size. */
  public int endAtChunkBoundary() {
    int size = checkedSize();
    checkNotSized("cut at a chunk boundary");
    ProtoWire.writeRedundantVarInt(sizeFieldSegment, sizeField, size);
    sizeField = -1;
    return size;
  }

  /** Ends the fragment with the drop-packet marker (2^28 - 1): the service discards the packet. */
  public void endAsDropped() {
    checkOpen();
    checkNotSized("dropped");
    ProtoWire.writeRedundantVarInt(sizeFieldSegment, sizeField, ProtoWire.MAX_MESSAGE_LENGTH);
    sizeField = -1;
  }

  private int checkedSize() {
    checkOpen();
    long size = stream.written() - start;
    if (size >= ProtoWire.MAX_MESSAGE_LENGTH) {
      throw new IllegalStateException("packet fragment too long: size=" + size);
    }
    return (int) size;
  }

  /** A sized fragment fits its range by contract: needing more room means more was written than declared. */
  private void checkNotSized(String what) {
    if (declaredSize >= 0) {
      int declared = declaredSize;
      declaredSize = -1;
      sizeField = -1;
      throw new IllegalStateException("sized packet " + what + ": more written than declared: declared="
          + declared + " written=" + size());
    }
  }

  private void checkOpen() {
    if (sizeField < 0) {
      throw new IllegalStateException("no packet fragment open");
    }
  }
}
