package org.jperfetto.service.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The 16-byte header stored in front of every chunk copied into a {@link TraceBuffer}, and in
 * front of padding. Records follow each other, each saying how long it is, so the buffer can be
 * walked from any record boundary. Sizes are multiples of 16, so every header is 16-byte aligned.
 *
 * <pre>
 *  0               4       6       8       10  11  12              16
 *  +---------------+-------+-------+-------+---+---+---------------+--------------------+
 *  | chunk id u32  | prod  | writer| frags |flg|knd| record size   | payload + zero pad |
 *  |               | u16   | u16   | u16   |u8 |u8 | u32 (incl hdr)|                    |
 *  +---------------+-------+-------+-------+---+---+---------------+--------------------+
 * </pre>
 *
 * kind: 0 = never written (zeroed memory), {@link #KIND_CHUNK}, {@link #KIND_PADDING}. All fields
 * little-endian. Only the buffer writes these headers, so they are trusted once written.
 */
final class ChunkRecord {
  static final int HEADER_SIZE = 16;
  static final int KIND_NONE = 0;
  static final int KIND_CHUNK = 1;
  static final int KIND_PADDING = 2;
  /**
   * Largest record: a whole 64 KiB page holding one chunk (payload = page - 8-byte page header -
   * 8-byte chunk header) plus this header.
   */
  static final long MAX_SIZE = 64 * 1024;

  private static final ValueLayout.OfInt U32 =
      ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16 =
      ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);

  private static final long CHUNK_ID = 0;
  private static final long PRODUCER_ID = 4;
  private static final long WRITER_ID = 6;
  private static final long NUM_FRAGMENTS = 8;
  private static final long FLAGS = 10;
  private static final long KIND = 11;
  private static final long SIZE = 12;

  private ChunkRecord() {}

  /** Header size plus payload, rounded up to a multiple of the header size. */
  static long recordSizeFor(long payloadSize) {
    return (payloadSize + HEADER_SIZE + HEADER_SIZE - 1) & -HEADER_SIZE;
  }

  static void writeChunk(MemorySegment buf, long at, int chunkId, int producerId, int writerId,
      int numFragments, int flags, long recordSize) {
    buf.set(U32, at + CHUNK_ID, chunkId);
    buf.set(U16, at + PRODUCER_ID, (short) producerId);
    buf.set(U16, at + WRITER_ID, (short) writerId);
    buf.set(U16, at + NUM_FRAGMENTS, (short) numFragments);
    buf.set(ValueLayout.JAVA_BYTE, at + FLAGS, (byte) flags);
    buf.set(ValueLayout.JAVA_BYTE, at + KIND, (byte) KIND_CHUNK);
    buf.set(U32, at + SIZE, (int) recordSize);
  }

  static void writePadding(MemorySegment buf, long at, long recordSize) {
    buf.asSlice(at, recordSize).fill((byte) 0);
    buf.set(ValueLayout.JAVA_BYTE, at + KIND, (byte) KIND_PADDING);
    buf.set(U32, at + SIZE, (int) recordSize);
  }

  static void setFlags(MemorySegment buf, long at, int flags) {
    buf.set(ValueLayout.JAVA_BYTE, at + FLAGS, (byte) flags);
  }

  static int chunkId(MemorySegment buf, long at) {
    return buf.get(U32, at + CHUNK_ID);
  }

  static int producerId(MemorySegment buf, long at) {
    return Short.toUnsignedInt(buf.get(U16, at + PRODUCER_ID));
  }

  static int writerId(MemorySegment buf, long at) {
    return Short.toUnsignedInt(buf.get(U16, at + WRITER_ID));
  }

  static int kind(MemorySegment buf, long at) {
    return buf.get(ValueLayout.JAVA_BYTE, at + KIND);
  }

  static long size(MemorySegment buf, long at) {
    return Integer.toUnsignedLong(buf.get(U32, at + SIZE));
  }
}
