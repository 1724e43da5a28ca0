package org.jperfetto.producer.proto;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.MemorySegment;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Writes a byte stream into a sequence of ranges [begin, end) of memory segments, e.g. the payloads of
 * successive SMB chunks. When the current range is full it asks its {@link Delegate} for the next one.
 * Positions are offsets into {@link #segment()}; nothing here allocates. One thread uses it at a time.
 */
public final class ScatteredStreamWriter {

  /** Hands out the next range to write into. */
  @FunctionalInterface
  public interface Delegate {
    /**
     * Called when the current range is exhausted. Must call {@link #reset} on the writer with a
     * non-empty range before returning (it may first finish off the old range, e.g. backfill sizes).
     */
    void getNewBuffer(ScatteredStreamWriter writer);
  }

  /** Bytes saved when a redundant size field is compacted to 1 byte. */
  private static final int BYTES_TO_COMPACT = Varints.REDUNDANT_SIZE - 1;

  private final Delegate delegate;
  private MemorySegment segment = MemorySegment.NULL;
  private long rangeBegin;
  private long writePtr;
  private long rangeEnd;
  /** Where {@link #tryClaim} may claim up to: rangeEnd, or -1 while claims are closed. */
  private long claimEnd;
  private long writtenPreviously;

  public ScatteredStreamWriter(Delegate delegate) {
    this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
  }

  /** Continues writing at [begin, end) of segment. An empty range (begin == end) means "no range". */
  public void reset(MemorySegment segment, long begin, long end) {
    if (begin < 0 || begin > end || end > segment.byteSize()) {
      throw new IllegalArgumentException("range out of segment: begin=" + begin + " end=" + end
          + " size=" + segment.byteSize());
    }
    writtenPreviously += writePtr - rangeBegin;
    this.segment = segment;
    this.rangeBegin = begin;
    this.writePtr = begin;
    this.rangeEnd = end;
    this.claimEnd = end;
  }

  /**
   * Makes {@link #tryClaim} decline until the next {@link #reset}, while ordinary writes go on
   * (e.g. into a scratch range whose bytes are thrown away). A declined claim is the same branch
   * as a full range, so a caller's compiled fast path has no separate test that could be cold.
   */
  public void closeClaims() {
    claimEnd = -1;
  }

  /** Lets {@link #tryClaim} claim up to the end of the current range again, after {@link #closeClaims}. */
  public void openClaims() {
    claimEnd = rangeEnd;
  }

  /** Asks the delegate for the next range; fails clearly if it gave none. */
  public void extend() {
    delegate.getNewBuffer(this);
    if (writePtr >= rangeEnd) {
      throw new IllegalStateException("delegate gave no writable range: begin=" + rangeBegin
          + " end=" + rangeEnd);
    }
  }

  public void writeByte(int value) {
    if (writePtr >= rangeEnd) {
      extend();
    }
    segment.set(JAVA_BYTE, writePtr++, (byte) value);
  }

  /** Writes value as a varint (unsigned 64-bit). */
  public void writeVarInt(long value) {
    long p = writePtr;
    if ((value >>> 56) == 0 && rangeEnd - p >= Long.BYTES) {
      // Up to 8 bytes: encode in a register and store once; the bytes past the varint get the
      // encoding's zero high bytes, inside our range, and are overwritten by whatever comes next.
      segment.set(ProtoWire.LONG_LE, p, Varints.packed(value));
      writePtr = p + Varints.size(value);
      return;
    }
    writeVarIntSlow(value);
  }

  /**
   * Writes one byte (e.g. a tag for a field below 16) and then value as a varint: the common
   * "tag + small value" field in a single store.
   */
  public void writeByteAndVarInt(int first, long value) {
    long p = writePtr;
    if ((value >>> 49) == 0 && rangeEnd - p >= Long.BYTES) {
      segment.set(ProtoWire.LONG_LE, p, (Varints.packed(value) << 8) | (first & 0xFF));
      writePtr = p + 1 + Varints.size(value);
      return;
    }
    writeByte(first);
    writeVarInt(value);
  }

  /** A varint that may cross into the next range: its bytes one at a time. */
  private void writeVarIntSlow(long value) {
    int size = Varints.size(value);
    long low = Varints.packedLow(value);
    for (int i = 0; i < Math.min(size, Long.BYTES); i++) {
      writeByte((int) (low >>> (8 * i)));
    }
    long high = Varints.packedHigh(value);
    for (int i = Long.BYTES; i < size; i++) {
      writeByte((int) (high >>> (8 * (i - Long.BYTES))));
    }
  }

  /** Writes value little-endian, 4 bytes. */
  public void writeFixed32(int value) {
    if (rangeEnd - writePtr >= Integer.BYTES) {
      segment.set(ProtoWire.INT_LE, writePtr, value);
      writePtr += Integer.BYTES;
      return;
    }
    for (int i = 0; i < Integer.BYTES; i++) {
      writeByte(value >>> (8 * i));
    }
  }

  /** Writes value little-endian, 8 bytes. */
  public void writeFixed64(long value) {
    if (rangeEnd - writePtr >= Long.BYTES) {
      segment.set(ProtoWire.LONG_LE, writePtr, value);
      writePtr += Long.BYTES;
      return;
    }
    for (int i = 0; i < Long.BYTES; i++) {
      writeByte((int) (value >>> (8 * i)));
    }
  }

  public void writeBytes(byte[] src, int offset, int length) {
    java.util.Objects.checkFromIndexSize(offset, length, src.length);
    while (length > 0) {
      if (writePtr >= rangeEnd) {
        extend();
      }
      int burst = (int) Math.min(rangeEnd - writePtr, length);
      MemorySegment.copy(src, offset, segment, JAVA_BYTE, writePtr, burst);
      writePtr += burst;
      offset += burst;
      length -= burst;
    }
  }

  public void writeBytes(MemorySegment src, long offset, long length) {
    java.util.Objects.checkFromIndexSize(offset, length, src.byteSize());
    while (length > 0) {
      if (writePtr >= rangeEnd) {
        extend();
      }
      long burst = Math.min(rangeEnd - writePtr, length);
      MemorySegment.copy(src, offset, segment, writePtr, burst);
      writePtr += burst;
      offset += burst;
      length -= burst;
    }
  }

  /**
   * Claims length bytes at the write position, for the caller to fill in {@link #segment()} itself,
   * when the range has at least length + slack bytes left (the caller may also overwrite the slack,
   * which stays free); returns their offset, or -1 claiming nothing (also while claims are closed).
   */
  public long tryClaim(int length, int slack) {
    long p = writePtr;
    if (claimEnd - p < (long) length + slack) {
      return -1;
    }
    writePtr = p + length;
    return p;
  }

  /**
   * Reserves size contiguous bytes (e.g. a size field to backfill) and returns their offset in
   * {@link #segment()} as it is after the call; takes a new range first if the current one is too
   * short. size must not exceed a fresh range.
   */
  public long reserveBytes(int size) {
    long begin = writePtr;
    if (rangeEnd - begin < size) {
      begin = reserveInNewRange(size);
    }
    writePtr = begin + size;
    return begin;
  }

  private long reserveInNewRange(int size) {
    extend();
    if (rangeEnd - writePtr < size) {
      throw new IllegalStateException("new range too small to reserve: size=" + size
          + " available=" + (rangeEnd - writePtr));
    }
    return writePtr;
  }

  /**
   * Writes a 1-byte tag (a field below 16) followed by 4 zeroed bytes for a size, and returns the
   * offset of those 4 bytes in {@link #segment()}: the start of a nested message in one store when
   * there is room, else the same through the general path.
   */
  public long writeTagAndReserveSize(int oneByteTag) {
    long p = writePtr;
    if (rangeEnd - p >= Long.BYTES) {
      segment.set(ProtoWire.LONG_LE, p, oneByteTag & 0xFF); // tag, then zeros
      writePtr = p + 1 + Varints.REDUNDANT_SIZE;
      return p + 1;
    }
    writeByte(oneByteTag);
    long field = reserveBytes(Varints.REDUNDANT_SIZE);
    segment.set(ProtoWire.INT_LE, field, 0);
    return field;
  }

  /** Moves the last size bytes written back by offset bytes, within the current range. */
  public void rewind(long size, int offset) {
    long src = writePtr - size;
    long dst = src - offset;
    if (size < 0 || dst < rangeBegin) {
      throw new IllegalStateException("rewind out of range: size=" + size + " offset=" + offset
          + " begin=" + rangeBegin + " writePtr=" + writePtr);
    }
    MemorySegment.copy(segment, src, segment, dst, size); // copy() handles overlap like memmove
    writePtr -= offset;
  }

  /**
   * Writes into the 4-byte field reserved at (fieldSegment, fieldOffset) the size of the body that
   * follows it. Like protozero, when the size is at most maxOneByteSize and the field and the whole
   * body sit contiguously in the current range (so nothing of it was handed back yet), the body is
   * moved back 3 bytes and the size takes 1 byte; otherwise it becomes a 4-byte redundant varint in
   * place. Returns the number of bytes saved (0 or 3).
   */
  public int backfillSize(MemorySegment fieldSegment, long fieldOffset, int size, int maxOneByteSize) {
    if (size <= maxOneByteSize
        && fieldSegment == segment
        && fieldOffset >= rangeBegin
        && fieldOffset + Varints.REDUNDANT_SIZE + size == writePtr) {
      compact(fieldOffset, size);
      return BYTES_TO_COMPACT;
    }
    Varints.writeRedundant(fieldSegment, fieldOffset, size);
    return 0;
  }

  /** Moves the size bytes after the 4-byte field at fieldOffset back by 3 and writes a 1-byte size. */
  private void compact(long fieldOffset, int size) {
    MemorySegment s = segment;
    long body = fieldOffset + Varints.REDUNDANT_SIZE;
    long to = fieldOffset + 1;
    long rounded = (size + 7) & ~7L;
    if (body + rounded <= rangeEnd) {
      // 8 bytes at a time, front to back: each store lands before the bytes still to be read. The
      // last store may spill up to 7 stale bytes past the new end, inside our range.
      for (long i = 0; i < rounded; i += Long.BYTES) {
        s.set(ProtoWire.LONG_LE, to + i, s.get(ProtoWire.LONG_LE, body + i));
      }
    } else {
      MemorySegment.copy(s, body, s, to, size);
    }
    s.set(JAVA_BYTE, fieldOffset, (byte) size);
    writePtr -= BYTES_TO_COMPACT;
  }

  /** The segment of the current range (MemorySegment.NULL before the first range). */
  public MemorySegment segment() {
    return segment;
  }

  public long rangeBegin() {
    return rangeBegin;
  }

  public long rangeEnd() {
    return rangeEnd;
  }

  public long writePtr() {
    return writePtr;
  }

  /** Moves the write position within the current range (e.g. to drop what a writer gave up). */
  public void setWritePtr(long position) {
    if (position < rangeBegin || position > rangeEnd) {
      throw new IllegalArgumentException("write position out of range: position=" + position
          + " begin=" + rangeBegin + " end=" + rangeEnd);
    }
    writePtr = position;
  }

  public long bytesAvailable() {
    return rangeEnd - writePtr;
  }

  /** Total bytes written through this writer over all ranges (skipped range tails not counted). */
  public long written() {
    return writtenPreviously + (writePtr - rangeBegin);
  }
}
