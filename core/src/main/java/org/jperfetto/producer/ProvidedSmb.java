package org.jperfetto.producer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;

/**
 * A shared memory buffer the producer makes itself and offers the service with
 * InitializeConnection (producer_provided_shmem, as upstream's SDK does for startup tracing): a
 * memfd sealed against resizing, mapped here. The service adopts it only if it is sealed and its
 * sizes are exactly what the service would pick for the hints, so the producer picks them by the
 * same rule ({@link org.jperfetto.abi.ShmSizes}) and sends them as the hints.
 *
 * @param segment the mapping (kept alive by its automatic arena while writers use it)
 * @param pageSize bytes per page, also the page size hint sent
 * @param fd the memfd to send (ownership goes with the send)
 */
record ProvidedSmb(MemorySegment segment, int pageSize, int fd) {
  /** What the service requires of a producer's SMB (upstream's kFileSeals). */
  static final int REQUIRED_SEALS = MemFd.F_SEAL_SHRINK | MemFd.F_SEAL_GROW | MemFd.F_SEAL_SEAL;

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
