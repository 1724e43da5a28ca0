package org.jperfetto.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reader of protobuf wire format over a range of a {@link MemorySegment}, for the few messages
 * decoded on the hot path without building protobuf objects (an InvokeMethod frame, a CommitData
 * request): the decoding half of the toolkit whose encoding half is {@link Varints} and
 * {@link ProtoWire}. Every read stays inside the range it was given: malformed or truncated input sets
 * {@link #failed()} instead of throwing, and the caller falls back to the full decoder or rejects
 * the message. Reusable: {@link #reset} points it at the next range; it allocates nothing.
 */
public final class ProtoCursor {
  private MemorySegment segment = MemorySegment.NULL;
  private long pos;
  private long end;
  private boolean failed;

  /** Reads {@code length} bytes of segment from offset (checked against the segment's size). */
  public ProtoCursor reset(MemorySegment seg, long offset, long length) {
    if (offset < 0 || length < 0 || offset > seg.byteSize() - length) {
      throw new IndexOutOfBoundsException("range out of segment: offset=" + offset + " length=" + length
          + " size=" + seg.byteSize());
    }
    segment = seg;
    pos = offset;
    end = offset + length;
    failed = false;
    return this;
  }

  /** True while bytes remain and nothing went wrong. */
  public boolean hasMore() {
    return !failed && pos < end;
  }

  /** True once a read found malformed or truncated input. */
  public boolean failed() {
    return failed;
  }

  /** Where the next read starts (an absolute segment offset). */
  public long position() {
    return pos;
  }

  /** Reads a field tag; 0 (and {@link #failed()}) when it is malformed or has field number 0. */
  public int readTag() {
    long tag = readVarint();
    if (failed || tag >>> 32 != 0 || ProtoWire.fieldNumber((int) tag) == 0) {
      failed = true;
      return 0;
    }
    return (int) tag;
  }

  /** Reads a varint of at most 10 bytes; 0 and {@link #failed()} on malformed input. */
  public long readVarint() {
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) {
        failed = true;
        return 0;
      }
      byte b = segment.get(ValueLayout.JAVA_BYTE, pos++);
      result |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return result;
      }
    }
    failed = true;
    return 0;
  }

  /**
   * Reads the length of a length-delimited field and checks it fits in what is left; the field's
   * bytes start at {@link #position()}. Returns -1 (and {@link #failed()}) when it does not.
   */
  public long readLength() {
    long n = readVarint();
    if (failed || n < 0 || n > end - pos) {
      failed = true;
      return -1;
    }
    return n;
  }

  /**
   * Reads a length-delimited field as a nested message: points {@code into} (another cursor) at its
   * bytes and moves this one past them. On a malformed or oversized length this cursor is
   * {@link #failed()} and {@code into} is given no bytes. Returns {@code into}.
   */
  public ProtoCursor readMessage(ProtoCursor into) {
    long n = readLength();
    if (n < 0) {
      return into.reset(segment, pos, 0);
    }
    into.reset(segment, pos, n);
    pos += n;
    return into;
  }

  /** Moves past {@code n} bytes (a length-delimited field's contents). */
  public void skipBytes(long n) {
    if (n < 0 || n > end - pos) {
      failed = true;
      return;
    }
    pos += n;
  }

  /** Skips the value of a field of the given tag; groups (wire types 3, 4) count as malformed. */
  public void skipField(int tag) {
    switch (ProtoWire.wireType(tag)) {
      case ProtoWire.WIRE_TYPE_VARINT -> readVarint();
      case ProtoWire.WIRE_TYPE_FIXED64 -> skipBytes(Long.BYTES);
      case ProtoWire.WIRE_TYPE_LENGTH_DELIMITED -> skipBytes(readLength());
      case ProtoWire.WIRE_TYPE_FIXED32 -> skipBytes(Integer.BYTES);
      default -> failed = true;
    }
  }
}
