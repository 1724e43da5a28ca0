package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.SharedMapping;
import org.junit.jupiter.api.Test;

/**
 * jtraced's trace buffer memory is committed as it is written: a 1 GiB buffer costs no resident
 * memory until data arrives, reads as zero, and is returned when the buffer closes. It can be
 * committed ahead of the writes in one call (Linux 5.14+).
 */
class LazyBufferMemoryIT {
  static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS");
  }

  @Test
  void aGibibyteBufferIsResidentOnlyWhereWritten() throws IOException {
    long gib = 1L << 30;
    long before = rssKb();
    try (Arena arena = Arena.ofShared()) {
      MemorySegment buf = ServiceHost.lazyBufferMemory(gib, arena);
      assertEquals(gib, buf.byteSize());
      long mapped = rssKb();
      assertTrue(mapped - before < 16 * 1024, "RSS grew by " + (mapped - before) + " KB on mapping 1 GiB");
      assertEquals(0, buf.get(ValueLayout.JAVA_LONG, gib - 8), "fresh memory reads as zero");
      buf.asSlice(0, 32L << 20).fill((byte) 1); // 32 MiB of data
      long written = rssKb();
      assertTrue(written - mapped >= 30 * 1024, "RSS grew by only " + (written - mapped) + " KB for 32 MiB written");
      assertTrue(written - mapped < 48 * 1024, "RSS grew by " + (written - mapped) + " KB for 32 MiB written");
    }
    assertTrue(rssKb() - before < 16 * 1024, "memory returned on close");
  }

  /** Whether this kernel has MADV_POPULATE_WRITE (5.14 and later). */
  static boolean kernelCanPopulate() throws IOException {
    String[] v = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim().split("[.-]");
    int major = Integer.parseInt(v[0]);
    int minor = Integer.parseInt(v[1]);
    return major > 5 || major == 5 && minor >= 14;
  }

  @Test
  void populateCommitsTheRangeAheadOfAnyWriteAndRefusesOneOutsideTheMapping() throws IOException {
    long gib = 1L << 30;
    try (Arena arena = Arena.ofShared()) {
      MemorySegment buf = ServiceHost.LAZY_BUFFER_MEMORY.allocate(gib, arena);
      long before = rssKb();
      boolean populated = ServiceHost.LAZY_BUFFER_MEMORY.populate(buf, 4096, 16L << 20);
      assertEquals(kernelCanPopulate(), populated, "populate works where the kernel has it");
      if (populated) {
        long grown = rssKb() - before;
        assertTrue(grown >= 15 * 1024, "16 MiB committed without a write: RSS grew by " + grown + " KB");
      }
      assertEquals(0, buf.get(ValueLayout.JAVA_LONG, 8192), "committed memory reads as zero");
      assertThrows(ErrnoException.class,
          () -> SharedMapping.populate(buf, gib - 4096, 8192), "a range past the mapping is refused");
      assertThrows(ErrnoException.class,
          () -> SharedMapping.populate(buf, -4096, 4096));
    }
  }
}
