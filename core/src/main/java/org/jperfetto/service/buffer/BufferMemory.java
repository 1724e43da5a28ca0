package org.jperfetto.service.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Where a {@link TraceBuffer}'s bytes come from. jtraced gives its buffers memory that the kernel
 * commits page by page as data arrives (as upstream's paged memory does), so a session's RSS follows
 * what it recorded, not the size it asked for; {@link #ZEROED} is the plain JDK allocation, which
 * touches every page up front.
 */
@FunctionalInterface
public interface BufferMemory {
  /**
   * size bytes, all zero, freed when arena closes.
   *
   * @throws OutOfMemoryError or a RuntimeException when the memory cannot be had
   */
  MemorySegment allocate(long size, Arena arena);

  /**
   * Commits [offset, offset + length) of a buffer this allocated ahead of its first write, if this
   * memory commits lazily and can do so in one go (cheaper than a page fault per page); returns
   * false when it cannot (or need not), and then is not asked again for that buffer.
   */
  default boolean populate(MemorySegment buffer, long offset, long length) {
    return false;
  }

  /** Arena.allocate: zeroed in full at once. */
  BufferMemory ZEROED = (size, arena) -> arena.allocate(size, 64);
}
