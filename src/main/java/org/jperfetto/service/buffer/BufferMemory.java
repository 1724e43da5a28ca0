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

  /** Arena.allocate: zeroed in full at once. */
  BufferMemory ZEROED = (size, arena) -> arena.allocate(size, 64);
}
