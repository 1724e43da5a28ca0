package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;

/**
 * A shared memory buffer the producer makes itself and offers the service with
 * InitializeConnection (producer_provided_shmem, as upstream's SDK does for startup tracing): a
 * memfd sealed against resizing, mapped here. The service adopts it only if it is sealed and its
 * sizes are exactly what the service would pick for the hints, so the producer picks them by the
 * service's rule and sends them as the hints.
 *
 * @param segment the mapping (kept alive by its automatic arena while writers use it)
 * @param pageSize bytes per page, also the page size hint sent
 * @param fd the memfd to send (ownership goes with the send)
 */
record ProvidedSmb(MemorySegment segment, int pageSize, int fd) {
  /** What the service requires of a producer's SMB (upstream's kFileSeals). */
  static final int REQUIRED_SEALS = MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL;
  static final long DEFAULT_SIZE = 256 * 1024;
  static final int DEFAULT_PAGE_SIZE = 4096;
  /** The service caps pages at 32 KiB though the ABI allows 64. */
  static final int MAX_PAGE_SIZE = 32 * 1024;

  /**
   * Size and page size the service picks for the hints (0 = default): pages of 4 KiB times a power of
   * two up to 32 KiB, at most 32 MiB in whole pages, anything else 256 KiB of 4 KiB pages.
   */
  record Sizes(long size, int pageSize) {
    static Sizes forHints(long sizeHint, long pageSizeHint) {
      long page = pageSizeHint <= 0 ? DEFAULT_PAGE_SIZE : Math.min(pageSizeHint, MAX_PAGE_SIZE);
      long size = sizeHint <= 0 ? DEFAULT_SIZE : Math.min(sizeHint, TracingProducer.MAX_SMB_SIZE);
      long pages4k = page / SharedMemoryAbi.MIN_PAGE_SIZE;
      boolean pageOk = page % SharedMemoryAbi.MIN_PAGE_SIZE == 0 && pages4k > 0 && (pages4k & (pages4k - 1)) == 0;
      if (!pageOk || size < page || size % page != 0) {
        return new Sizes(DEFAULT_SIZE, DEFAULT_PAGE_SIZE);
      }
      return new Sizes(size, (int) page);
    }
  }

  /**
   * A new zeroed memfd of size bytes with seals, mapped. Size and seals are the caller's: only a
   * test offers a buffer the service must refuse.
   */
  static ProvidedSmb create(long size, int pageSize, int seals) throws ErrnoException {
    int fd = MemFd.create("perfetto_shmem", size);
    try {
      if (seals != 0) {
        MemFd.addSeals(fd, seals);
      }
      MemorySegment smb = SharedMapping.map(fd, size, Arena.ofAuto());
      return new ProvidedSmb(smb, pageSize, fd);
    } catch (ErrnoException | RuntimeException e) {
      Fds.closeQuietly(fd);
      throw e;
    }
  }
}
