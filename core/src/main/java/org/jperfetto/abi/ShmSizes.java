package org.jperfetto.abi;

/**
 * Size and page size of a producer's SMB after the service's checks (upstream's
 * EnsureValidShmSizes): 0 means the default; the page size is 4 KiB times a power of two up to
 * 32 KiB; the size is at most 32 MiB and a multiple of the page size. Anything invalid falls back
 * to the defaults, 256 KiB of 4 KiB pages. The service applies it to the hints; a producer that
 * offers its own SMB applies it first, so the service adopts what it offers.
 */
public record ShmSizes(long size, int pageSize) {
  public static final long DEFAULT_SIZE = 256 * 1024;
  public static final int DEFAULT_PAGE_SIZE = 4096;
  public static final long MAX_SIZE = 32L * 1024 * 1024;
  /** The ABI allows 64 KiB pages but upstream's service caps them at 32 KiB. */
  public static final int MAX_PAGE_SIZE = 32 * 1024;

  public static final ShmSizes DEFAULT = new ShmSizes(DEFAULT_SIZE, DEFAULT_PAGE_SIZE);

  /** The sizes the service will use for the hints (bytes, 0 = unset). */
  public static ShmSizes validate(long sizeHint, long pageSizeHint) {
    long page = pageSizeHint <= 0 ? DEFAULT_PAGE_SIZE : Math.min(pageSizeHint, MAX_PAGE_SIZE);
    long size = sizeHint <= 0 ? DEFAULT_SIZE : Math.min(sizeHint, MAX_SIZE);
    long pages4k = page / SharedMemoryAbi.MIN_PAGE_SIZE;
    boolean pageOk = page >= SharedMemoryAbi.MIN_PAGE_SIZE && page % SharedMemoryAbi.MIN_PAGE_SIZE == 0
        && (pages4k & (pages4k - 1)) == 0;
    if (!pageOk || size < page || size % page != 0) {
      return DEFAULT;
    }
    return new ShmSizes(size, (int) page);
  }
}
