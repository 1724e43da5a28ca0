package org.jperfetto.producer;

import com.google.protobuf.InvalidProtocolBufferException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.ipc.Reply;
import org.jperfetto.os.Errno;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.protos.InitializeConnectionResponse;

/**
 * How a producer and the service agree on the shared memory buffer: the producer may offer its
 * own (a sealed memfd of the hinted sizes, sent with InitializeConnection), which the service
 * adopts or not; otherwise the service sends one with setup_tracing, which is checked (page size,
 * size, F_SEAL_SHRINK) before it is mapped. Producer thread.
 */
final class SmbNegotiation {
  private static final System.Logger LOG = System.getLogger(SmbNegotiation.class.getName());

  private final String producerName;
  private final int sizeHint;
  private final int pageSizeHint;
  private final boolean offerOwn;
  /** Tests only: the offered SMB's size (0: from the hints) and seals. */
  private final long offeredSize;
  private final int offeredSeals;
  /** The drop grace every arbiter made here gets (TracingProducer.Builder.dropGrace). */
  private final long dropGraceNanos;

  SmbNegotiation(String producerName, int sizeHint, int pageSizeHint, boolean offerOwn,
      long offeredSize, int offeredSeals, long dropGraceNanos) {
    this.producerName = producerName;
    this.sizeHint = sizeHint;
    this.pageSizeHint = pageSizeHint;
    this.offerOwn = offerOwn;
    this.offeredSize = offeredSize;
    this.offeredSeals = offeredSeals;
    this.dropGraceNanos = dropGraceNanos;
  }

  /**
   * The arbiter of an SMB (the service's, an emulated one, or our own), for writers that commit to
   * sink, with this producer's drop grace: every SMB the producer writes into gets one here.
   */
  SharedMemoryArbiter arbiter(MemorySegment smb, int pageSize, SharedMemoryArbiter.CommitSink sink) {
    SharedMemoryArbiter a = new SharedMemoryArbiter(new SharedMemoryAbi(smb, pageSize), sink);
    a.dropGraceNanos(dropGraceNanos);
    return a;
  }

  /**
   * The SMB hints of InitializeConnection, as upstream's SDK sends them: both always present
   * (0 = the service's default); with an SMB of our own, its exact sizes (the service adopts it
   * only then) and producer_provided_shmem.
   *
   * @param startupSmb the SMB startup tracing writes into, offered instead of a new one; or null
   * @return the SMB offered (its fd goes with the request), or null
   */
  ProvidedSmb offer(InitializeConnectionRequest.Builder init, ProvidedSmb startupSmb) {
    init.setSharedMemoryPageSizeHintBytes(pageSizeHint).setSharedMemorySizeHintBytes(sizeHint);
    if (!offerOwn) {
      return null;
    }
    ProvidedSmb smb = startupSmb != null ? startupSmb : create();
    if (smb != null) {
      init.setSharedMemoryPageSizeHintBytes(smb.pageSize())
          .setSharedMemorySizeHintBytes((int) smb.segment().byteSize())
          .setProducerProvidedShmem(true);
    }
    return smb;
  }

  /** The hints alone, for a connection that cannot pass a descriptor (TCP); returns null. */
  ProvidedSmb offerNothing(InitializeConnectionRequest.Builder init) {
    init.setSharedMemoryPageSizeHintBytes(pageSizeHint).setSharedMemorySizeHintBytes(sizeHint);
    return null;
  }

  /** Our own SMB; null (the service's will do) if the kernel refuses one. */
  ProvidedSmb create() {
    ShmSizes sizes = ShmSizes.validate(Integer.toUnsignedLong(sizeHint),
        Integer.toUnsignedLong(pageSizeHint));
    long size = offeredSize != 0 ? offeredSize : sizes.size();
    try {
      return ProvidedSmb.create(size, sizes.pageSize(), offeredSeals);
    } catch (ErrnoException e) {
      LOG.log(Level.WARNING, "producer " + producerName + ": cannot make its own SMB (" + e.getMessage()
          + "); the service will provide one");
      return null;
    }
  }

  /**
   * Whether the InitializeConnection answer asks for shmem emulation (use_shmem_emulation: the
   * service is remote, no descriptor reaches it, chunks must travel inside CommitData).
   */
  boolean emulationAsked(Reply reply) {
    try {
      return InitializeConnectionResponse.parseFrom(reply.bytes()).getUseShmemEmulation();
    } catch (InvalidProtocolBufferException e) {
      return false; // adopted() says it once
    }
  }

  /**
   * The SMB of a connection without shared memory: our own memory of
   * {@link #EMULATED_SMB_SIZE} with the page size setup_tracing gives, whose chunks are copied into
   * CommitData (upstream's shmem emulation); null, logged, if the page size is unfit.
   */
  SharedMemoryArbiter emulatedSmb(int pageSizeKb, SharedMemoryArbiter.CommitSink sink) {
    long pageSize = pageSizeKb * 1024L;
    if (pageSize > SharedMemoryAbi.MAX_PAGE_SIZE || !SharedMemoryAbi.isValidPageSize((int) pageSize)) {
      LOG.log(Level.ERROR, "producer " + producerName + ": setup_tracing page size invalid: page_size_kb="
          + pageSizeKb);
      return null;
    }
    MemorySegment smb = Arena.ofAuto().allocate(EMULATED_SMB_SIZE, pageSize);
    LOG.log(Level.DEBUG, () -> "producer " + producerName + ": emulated SMB, size=" + EMULATED_SMB_SIZE
        + " page=" + pageSize);
    return arbiter(smb, (int) pageSize, sink);
  }

  /** The SMB of a connection without shared memory (upstream's kShmemEmulationSize). */
  static final long EMULATED_SMB_SIZE = 1024 * 1024;

  /** Whether the InitializeConnection answer says the service adopted the SMB we offered. */
  boolean adopted(Reply reply) {
    try {
      return InitializeConnectionResponse.parseFrom(reply.bytes()).getUsingShmemProvidedByProducer();
    } catch (InvalidProtocolBufferException e) {
      LOG.log(Level.WARNING, "producer " + producerName + ": malformed InitializeConnectionResponse: "
          + e.getMessage());
      return false;
    }
  }

  /**
   * Maps the SMB the service sent with setup_tracing (fd, always closed here) after checking it,
   * for writers that commit to sink; null, logged, if it is unfit.
   */
  SharedMemoryArbiter mapServiceSmb(int pageSizeKb, int fd, SharedMemoryArbiter.CommitSink sink) {
    try {
      if (fd < 0) {
        LOG.log(Level.ERROR, "producer " + producerName + ": setup_tracing without a shared memory fd");
        return null;
      }
      long pageSize = pageSizeKb * 1024L;
      if (pageSize > SharedMemoryAbi.MAX_PAGE_SIZE || !SharedMemoryAbi.isValidPageSize((int) pageSize)) {
        LOG.log(Level.ERROR, "producer " + producerName + ": setup_tracing page size invalid: page_size_kb="
            + pageSizeKb);
        return null;
      }
      long size = MemFd.size(fd);
      if (size <= 0 || size > ShmSizes.MAX_SIZE /* upstream's kMaxShmSize */ || size % pageSize != 0) {
        LOG.log(Level.ERROR, "producer " + producerName + ": shared memory size invalid: size=" + size
            + " page=" + pageSize);
        return null;
      }
      if (!shrinkSealedOrUnsealable(fd)) {
        LOG.log(Level.ERROR, "producer " + producerName
            + ": shared memory fd can shrink under us (no F_SEAL_SHRINK)");
        return null;
      }
      MemorySegment smb = SharedMapping.map(fd, size, Arena.ofAuto());
      LOG.log(Level.DEBUG, () -> "producer " + producerName + ": SMB mapped, size=" + size + " page="
          + pageSize);
      return arbiter(smb, (int) pageSize, sink);
    } catch (ErrnoException e) {
      LOG.log(Level.ERROR, "producer " + producerName + ": mapping the shared memory failed: "
          + e.getMessage());
      return null;
    } finally {
      Fds.closeQuietly(fd);
    }
  }

  /** A memfd must carry F_SEAL_SHRINK; a file that cannot be sealed at all is accepted, as upstream. */
  private static boolean shrinkSealedOrUnsealable(int fd) throws ErrnoException {
    try {
      return (MemFd.seals(fd) & MemFd.F_SEAL_SHRINK) != 0;
    } catch (ErrnoException e) {
      if (e.errno() == Errno.EINVAL) {
        return true;
      }
      throw e;
    }
  }
}
