package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Streams one protobuf message (e.g. a TracePacket) and its nested messages into a
 * {@link ScatteredStreamWriter}, the way protozero does: fields go out as they are appended, and a
 * nested message gets 4 reserved bytes for its size, filled in when it ends. A short nested message
 * that stayed in one range is compacted to a 1-byte size; a size whose range was handed back is
 * written to a {@link PatchList} entry instead (see {@link #redirectSizeFields}).
 *
 * <p>The writer is a stack: appends go to the innermost open message; {@link #beginNested} opens a
 * child and {@link #endNested} closes it. The stack is preallocated: no object per message, no
 * allocation at all. Field numbers are parameters; one thread uses a writer at a time.
 */
public final class ProtoWriter {
  /**
   * Most nested messages open at once under the root. protozero has no fixed limit; protobuf's
   * parsers refuse deeper than 100 levels by default, so a deeper message could not be read anyway.
   */
  public static final int MAX_NESTING_DEPTH = 100;

  private static final long DISCARDED = -1;
  private static final int MAX_TAG_SIZE = 5;
  // Strings up to this many chars take the one-pass path; their UTF-8 length fits 2 varint bytes.
  private static final int SHORT_STRING_CHARS = 127;

  private final ScatteredStreamWriter stream;
  private final PatchList patches;
  private int depth;
  // Per open nested message, index 1..depth. Where its size goes: (segment, offset) in the stream,
  // or segment == null and position = patch sequence number, or DISCARDED.
  private final MemorySegment[] sizeFieldSegment = new MemorySegment[MAX_NESTING_DEPTH + 1];
  private final long[] sizeFieldPosition = new long[MAX_NESTING_DEPTH + 1];
  // stream.written() just after the size field: where the message body starts.
  private final long[] bodyStart = new long[MAX_NESTING_DEPTH + 1];

  public ProtoWriter(ScatteredStreamWriter stream, PatchList patches) {
    this.stream = java.util.Objects.requireNonNull(stream, "stream");
    this.patches = java.util.Objects.requireNonNull(patches, "patches");
  }

  public ScatteredStreamWriter stream() {
    return stream;
  }

  public PatchList patches() {
    return patches;
  }

  /**
   * Forgets any nested messages still open, so the next root message starts at depth 0; their sizes
   * stay unwritten. The TraceWriter calls it when it starts a packet.
   */
  public void reset() {
    if (depth != 0) {
      java.util.Arrays.fill(sizeFieldSegment, 1, depth + 1, null);
      depth = 0;
    }
  }

  /** Number of nested messages open (0 when appending to the root). */
  public int depth() {
    return depth;
  }

  // ---- scalar fields ----

  /**
   * int32, int64, uint32, uint64, bool, enum. A negative int32/int64 takes 10 bytes, as in protobuf;
   * pass a uint32 held in an int as {@code value & 0xFFFFFFFFL}.
   */
  public void appendVarInt(int field, long value) {
    int tag = ProtoWire.varIntTag(field);
    if (Varints.isOneByte(tag)) { // fields 1..15
      stream.writeByteAndVarInt(tag, value);
    } else {
      stream.writeVarInt(tag & 0xFFFF_FFFFL);
      stream.writeVarInt(value);
    }
  }

  /** sint32, sint64 (zigzag). */
  public void appendSignedVarInt(int field, long value) {
    appendVarInt(field, ProtoWire.zigZagEncode(value));
  }

  public void appendBool(int field, boolean value) {
    appendVarInt(field, value ? 1 : 0);
  }

  /** fixed32, sfixed32. */
  public void appendFixed32(int field, int value) {
    writeTag(field, ProtoWire.WIRE_TYPE_FIXED32);
    stream.writeFixed32(value);
  }

  /** fixed64, sfixed64. */
  public void appendFixed64(int field, long value) {
    writeTag(field, ProtoWire.WIRE_TYPE_FIXED64);
    stream.writeFixed64(value);
  }

  public void appendFloat(int field, float value) {
    appendFixed32(field, Float.floatToRawIntBits(value));
  }

  public void appendDouble(int field, double value) {
    appendFixed64(field, Double.doubleToRawLongBits(value));
  }

  // ---- length-delimited fields ----

  /** A string field, UTF-8 encoded straight into the stream (unpaired surrogates become '?'). */
  public void appendString(int field, String value) {
    int chars = value.length();
    // Short strings in one pass: guess a 1-byte length, fix it up if the UTF-8 came out longer.
    if (chars <= SHORT_STRING_CHARS
        && stream.bytesAvailable() >= MAX_TAG_SIZE + 2 + 3L * chars + Utf8.SLACK) {
      writeTag(field, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
      MemorySegment segment = stream.segment();
      long lengthAt = stream.writePtr();
      long end = Utf8.encode(segment, lengthAt + 1, value);
      int length = (int) (end - lengthAt - 1);
      if (length <= Varints.MAX_ONE_BYTE) {
        segment.set(ValueLayout.JAVA_BYTE, lengthAt, (byte) length);
      } else { // at most 3 * SHORT_STRING_CHARS bytes: a 2-byte length
        MemorySegment.copy(segment, lengthAt + 1, segment, lengthAt + 2, length);
        end = Varints.put(segment, lengthAt, length) + length;
      }
      stream.setWritePtr(end);
      return;
    }
    int length = Utf8.encodedLength(value);
    writeLengthPreamble(field, length);
    Utf8.write(stream, value, length);
  }

  public void appendBytes(int field, byte[] value) {
    appendBytes(field, value, 0, value.length);
  }

  public void appendBytes(int field, byte[] value, int offset, int length) {
    java.util.Objects.checkFromIndexSize(offset, length, value.length);
    writeLengthPreamble(field, length);
    stream.writeBytes(value, offset, length);
  }

  public void appendBytes(int field, MemorySegment value, long offset, long length) {
    java.util.Objects.checkFromIndexSize(offset, length, value.byteSize());
    if (length > Varints.MAX_REDUNDANT) {
      throw new IllegalArgumentException("bytes field too long: field=" + field + " length=" + length);
    }
    writeLengthPreamble(field, (int) length);
    stream.writeBytes(value, offset, length);
  }

  /** Appends bytes that already are encoded fields of the current message. */
  public void appendRawProtoBytes(byte[] encoded, int offset, int length) {
    stream.writeBytes(encoded, offset, length);
  }

  private void writeTag(int field, int wireType) {
    // A tag is an unsigned 32-bit varint: fields from 2^28 up set the int's sign bit.
    stream.writeVarInt(ProtoWire.makeTag(field, wireType) & 0xFFFF_FFFFL);
  }

  private void writeLengthPreamble(int field, int length) {
    writeTag(field, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
    stream.writeVarInt(length & 0xFFFF_FFFFL);
  }

  // ---- nested messages ----

  /** Opens a nested message in field; appends go to it until {@link #endNested}. */
  public void beginNested(int field) {
    if (depth == MAX_NESTING_DEPTH) {
      throw tooDeep(field);
    }
    int tag = ProtoWire.makeTag(field, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
    long sizeField;
    if (Varints.isOneByte(tag)) {
      sizeField = stream.writeTagAndReserveSize(tag);
    } else {
      stream.writeVarInt(tag & 0xFFFF_FFFFL);
      sizeField = stream.reserveBytes(Varints.REDUNDANT_SIZE);
      stream.segment().set(ProtoWire.INT_LE, sizeField, 0);
    }
    // The 4 bytes are zero: they stay so if the size goes to a patch.
    MemorySegment segment = stream.segment();
    int level = ++depth;
    sizeFieldSegment[level] = segment;
    sizeFieldPosition[level] = sizeField;
    bodyStart[level] = stream.written();
  }

  private IllegalStateException tooDeep(int field) {
    return new IllegalStateException("nesting too deep: field=" + field + " depth=" + depth
        + " max=" + MAX_NESTING_DEPTH);
  }

  /** Closes the innermost nested message, writes its size, and returns that size in bytes. */
  public int endNested() {
    int level = depth;
    if (level == 0) {
      throw new IllegalStateException("no nested message open");
    }
    depth = level - 1;
    long length = stream.written() - bodyStart[level];
    MemorySegment segment = sizeFieldSegment[level];
    if (segment == null || length > Varints.MAX_ONE_BYTE) {
      return endNestedSlow(level, segment, length);
    }
    sizeFieldSegment[level] = null;
    stream.backfillSize(segment, sizeFieldPosition[level], (int) length, Varints.MAX_ONE_BYTE);
    return (int) length;
  }

  /** endNested for a long message, or one whose size goes to a patch or nowhere. */
  private int endNestedSlow(int level, MemorySegment segment, long length) {
    if (length > Varints.MAX_REDUNDANT) {
      throw new IllegalStateException("nested message too long: depth=" + level + " size=" + length
          + " max=" + Varints.MAX_REDUNDANT);
    }
    int size = (int) length;
    long position = sizeFieldPosition[level];
    sizeFieldSegment[level] = null;
    if (segment != null) {
      Varints.writeRedundant(segment, position, size);
    } else if (position != DISCARDED) {
      patches.fill(position, size);
    }
    return size;
  }

  /**
   * Closes every open nested message, writing their sizes (and so filling their patch entries). A
   * TraceWriter calls it when a packet ends, and before a new one if the last was left open.
   */
  public void endAllNested() {
    while (depth > 0) {
      endNested();
    }
  }

  /**
   * Called by the owner of the ranges (the TraceWriter) before it hands back a chunk whose payload is
   * [payloadBegin, end) of segment: the size fields of open messages that lie there are moved to new
   * {@link PatchList} entries (chunk chunkId, offset from payloadBegin). Returns how many moved; if
   * any, the chunk needs the needs-patching flag. segment must be the very instance that was given
   * to {@link ScatteredStreamWriter#reset} (e.g. the whole SMB, with the chunk as offsets in it).
   */
  public int redirectSizeFields(MemorySegment segment, long payloadBegin, long end, int chunkId) {
    int moved = 0;
    for (int level = 1; level <= depth; level++) {
      if (sizeFieldIn(level, segment, payloadBegin, end)) {
        long offset = sizeFieldPosition[level] - payloadBegin;
        if (offset > PatchList.MAX_OFFSET) {
          throw new IllegalStateException("size field beyond patchable offset: chunk="
              + Integer.toUnsignedString(chunkId) + " offset=" + offset);
        }
        sizeFieldSegment[level] = null;
        sizeFieldPosition[level] = patches.annotate(chunkId, (int) offset);
        moved++;
      }
    }
    return moved;
  }

  /**
   * Called when the data in [begin, end) of segment will be thrown away (e.g. the packet is being
   * dropped): sizes of open messages that lie there are not written anywhere.
   */
  public void discardSizeFields(MemorySegment segment, long begin, long end) {
    for (int level = 1; level <= depth; level++) {
      if (sizeFieldIn(level, segment, begin, end)) {
        sizeFieldSegment[level] = null;
        sizeFieldPosition[level] = DISCARDED;
      }
    }
  }

  /** Whether the size field of the open message at level lies in [begin, end) of segment. */
  private boolean sizeFieldIn(int level, MemorySegment segment, long begin, long end) {
    long position = sizeFieldPosition[level];
    return sizeFieldSegment[level] == segment && position >= begin
        && position + Varints.REDUNDANT_SIZE <= end;
  }
}
