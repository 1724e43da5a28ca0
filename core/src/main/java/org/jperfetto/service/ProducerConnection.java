package org.jperfetto.service;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.ChunkReadResult;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.UntrustedChunkReader;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.service.buffer.PatchBatch;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * The service's side of one connected producer (upstream's ProducerEndpointImpl): its SMB, the
 * writers it registered and the buffers it may write into. Trust: id, identity and the SMB's
 * geometry are the service's; every request field and every SMB byte is the producer's.
 */
final class ProducerConnection implements ProducerEndpoint {
  private static final System.Logger LOG = System.getLogger(ProducerConnection.class.getName());

  /** ABI violations after which the producer is considered hostile and dropped. */
  static final int MAX_ABI_VIOLATIONS = 256;
  /** Largest chunk a producer may pass inline in CommitData (ChunksToMove.data). */
  static final int MAX_INLINE_CHUNK_SIZE = SharedMemoryAbi.MAX_PAGE_SIZE - 8;

  /** The parts of the service a producer's requests go to (the same for every producer). */
  record ServiceParts(ServiceState state, DataSources dataSources, Flushes flushes, Triggers triggers,
      ServiceQueries counters) {}

  private final ServiceParts service;
  private final ServiceState state;
  private final ServiceQueries counters;
  final int id;
  final ClientIdentity identity;
  final String name;
  final String sdkVersion;
  final ProducerCallbacks callbacks;
  final long smbSizeHint;
  final long pageSizeHint;

  private SharedMemory smb;
  private SharedMemoryAbi abi;
  private UntrustedChunkReader reader;
  private boolean providedByProducer;
  /** writer id -> the buffer it registered for. */
  private final Map<Integer, Integer> writers = new HashMap<>();
  /** buffer id -> number of this producer's data source instances writing into it. */
  private final Map<Integer, Integer> allowedBuffers = new HashMap<>();
  private boolean connected = true;
  private long abiViolations;
  private boolean refusedDataSource;

  ProducerConnection(ServiceParts service, int id, ClientIdentity identity, String name,
      String sdkVersion, ProducerCallbacks callbacks, long smbSizeHint, long pageSizeHint) {
    this.service = service;
    this.state = service.state();
    this.counters = service.counters();
    this.id = id;
    this.identity = identity;
    this.name = name;
    this.sdkVersion = sdkVersion;
    this.callbacks = callbacks;
    this.smbSizeHint = smbSizeHint;
    this.pageSizeHint = pageSizeHint;
  }

  // ---------------------------------------------------------------------------------------------
  // SMB

  void setupSharedMemory(SharedMemory memory, int pageSize, boolean byProducer) {
    smb = memory;
    abi = new SharedMemoryAbi(memory.segment(), pageSize);
    reader = new UntrustedChunkReader(abi);
    providedByProducer = byProducer;
    callbacks.setupTracing(memory, pageSize / 1024);
  }

  boolean hasSharedMemory() {
    return smb != null;
  }

  @Override
  public Optional<SharedMemory> sharedMemory() {
    return Optional.ofNullable(smb);
  }

  @Override
  public int producerId() {
    return id;
  }

  @Override
  public boolean usingProducerProvidedSmb() {
    return providedByProducer;
  }

  @Override
  public boolean directSmbPatchingSupported() {
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Buffers this producer may write into

  void allowTargetBuffer(int bufferId) {
    allowedBuffers.merge(bufferId, 1, Integer::sum);
  }

  void disallowTargetBuffer(int bufferId) {
    allowedBuffers.computeIfPresent(bufferId, (k, n) -> n > 1 ? n - 1 : null);
  }

  boolean isAllowedTargetBuffer(int bufferId) {
    return allowedBuffers.containsKey(bufferId);
  }

  /** True the first time it is asked: the service logs only a producer's first refused data source. */
  boolean firstRefusal() {
    boolean first = !refusedDataSource;
    refusedDataSource = true;
    return first;
  }

  // ---------------------------------------------------------------------------------------------
  // The producer port

  @Override
  public String registerDataSource(DataSourceDescriptor descriptor) {
    state.checkThread();
    if (!connected) {
      return "producer disconnected";
    }
    return service.dataSources().register(this, descriptor);
  }

  @Override
  public void unregisterDataSource(String dataSourceName) {
    state.checkThread();
    if (connected) {
      service.dataSources().unregister(this, dataSourceName);
    }
  }

  @Override
  public void updateDataSource(DataSourceDescriptor descriptor) {
    state.checkThread();
    if (connected) {
      service.dataSources().update(this, descriptor);
    }
  }

  @Override
  public void commitData(CommitDataRequest request, Runnable ack) {
    state.checkThread();
    if (!connected) {
      return;
    }
    for (CommitDataRequest.ChunksToMove move : request.getChunksToMoveList()) {
      if (move.hasData()) {
        moveInlineChunk(move);
      } else {
        moveChunk(move.getPage(), move.getChunk(), move.getTargetBuffer());
      }
    }
    for (CommitDataRequest.ChunkToPatch patch : request.getChunksToPatchList()) {
      applyPatches(patch);
    }
    endCommit(request.getFlushRequestId());
    if (ack != null) {
      ack.run();
    }
  }

  @Override
  public boolean commitChunk(int page, int chunk, int targetBuffer) {
    state.checkThread();
    if (!connected) {
      return false;
    }
    moveChunk(page, chunk, targetBuffer);
    return true;
  }

  @Override
  public void endCommit(long flushRequestId) {
    state.checkThread();
    if (!connected) {
      return;
    }
    if (flushRequestId != 0) {
      service.flushes().acked(id, flushRequestId);
    }
    checkViolations();
  }

  /** Copies a committed SMB chunk into its buffer and frees it (page, chunk: untrusted). */
  private void moveChunk(int page, int chunk, int targetBuffer) {
    if (reader == null) {
      counters.countDiscardedChunk(); // committed before any SMB was set up
      return;
    }
    ChunkReadResult r = reader.acquireCommitted(page, chunk);
    if (r != ChunkReadResult.OK) {
      if (r.isAbiViolation()) {
        violation("chunk not movable: page=" + Integer.toUnsignedString(page) + " chunk="
            + Integer.toUnsignedString(chunk) + " " + r);
      }
      return;
    }
    try {
      copyIfAllowed(reader.writerId(), reader.chunkId(), targetBuffer,
          reader.packetCount(), reader.flags(), true, smb.segment(), reader.payloadOffset(),
          reader.payloadSize());
    } finally {
      if (reader.releaseAsFree() != ChunkReadResult.OK) {
        violation("chunk changed while being read: page=" + Integer.toUnsignedString(page) + " chunk="
            + Integer.toUnsignedString(chunk));
      }
    }
  }

  /** A chunk sent in the request itself (producers without a shared SMB): header + payload. */
  private void moveInlineChunk(CommitDataRequest.ChunksToMove move) {
    byte[] data = move.getData().toByteArray();
    if (data.length < ChunkHeader.SIZE || data.length > MAX_INLINE_CHUNK_SIZE) {
      violation("inline chunk size out of range: size=" + data.length);
      return;
    }
    MemorySegment seg = MemorySegment.ofArray(data);
    int chunkId = seg.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0);
    int writerId = Short.toUnsignedInt(
        seg.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 4));
    short packets = seg.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 6);
    if (writerId == 0 || writerId > ChunkHeader.MAX_WRITER_ID) {
      violation("inline chunk with bad writer id: writer=" + writerId);
      return;
    }
    copyIfAllowed(writerId, chunkId, move.getTargetBuffer(), ChunkHeader.packetCount(packets),
        ChunkHeader.packetFlags(packets), !move.getChunkIncomplete(), seg, ChunkHeader.SIZE,
        data.length - ChunkHeader.SIZE);
  }

  private void copyIfAllowed(int writerId, int chunkId, int bufferId, int packetCount, int flags,
      boolean complete, MemorySegment src, long offset, long size) {
    String refused = copyChunk(writerId, chunkId, bufferId, packetCount, flags,
        complete, src, offset, size);
    if (refused != null) {
      violation(refused);
    }
  }

  private void applyPatches(CommitDataRequest.ChunkToPatch chunk) {
    PatchBatch patches = new PatchBatch();
    for (CommitDataRequest.ChunkToPatch.Patch p : chunk.getPatchesList()) {
      byte[] data = p.getData().toByteArray();
      patches.add(Integer.toUnsignedLong(p.getOffset()), MemorySegment.ofArray(data), 0, data.length);
    }
    patchChunk(chunk.getTargetBuffer(), chunk.getWriterId(), chunk.getChunkId(), patches,
        chunk.getHasMorePatches());
  }

  @Override
  public void patchChunk(int targetBuffer, int writerId, int chunkId, PatchBatch patches,
      boolean morePatches) {
    state.checkThread();
    if (!connected) {
      return;
    }
    if (writerId == 0 || Integer.compareUnsigned(writerId, ChunkHeader.MAX_WRITER_ID) > 0) {
      counters.countDiscardedPatches(patches.count());
      return;
    }
    TraceBuffer buf = state.buffer(targetBuffer);
    if (buf == null || buf.isReadOnly()) {
      counters.countDiscardedPatches(patches.count());
      return;
    }
    // TraceBuffer finds the chunk by this producer's id only.
    buf.tryPatchChunkContents(id, writerId, chunkId, patches, morePatches);
  }

  /**
   * Flush/stop/disconnect: copies chunks of registered writers that are complete but not yet
   * committed, or being written with finished fragments, without changing their state.
   */
  void scrapeSharedMemory() {
    if (reader == null || !state.smbScraping()) {
      return;
    }
    MemorySegment seg = smb.segment();
    for (int page = 0; page < abi.numPages(); page++) {
      int bitmap = abi.headerBitmap(page);
      for (int chunks = UntrustedChunkReader.scrapableChunks(bitmap); chunks != 0; chunks &= chunks - 1) {
        int idx = Integer.numberOfTrailingZeros(chunks);
        if (reader.scrape(page, bitmap, idx) != ChunkReadResult.OK) {
          continue;
        }
        Integer buffer = writers.get(reader.writerId());
        if (buffer == null || !isAllowedTargetBuffer(buffer)) {
          continue; // where this writer's data goes is known only for registered writers
        }
        copyChunk(reader.writerId(), reader.chunkId(), buffer, reader.packetCount(),
            reader.flags(), reader.complete(), seg, reader.payloadOffset(), reader.payloadSize());
      }
    }
  }

  @Override
  public void registerTraceWriter(int writerId, int targetBuffer) {
    state.checkThread();
    if (connected && writerId > 0 && writerId <= ChunkHeader.MAX_WRITER_ID) {
      writers.put(writerId, targetBuffer);
    }
  }

  @Override
  public void unregisterTraceWriter(int writerId) {
    state.checkThread();
    writers.remove(writerId);
  }

  @Override
  public void notifyDataSourceStarted(long instanceId) {
    state.checkThread();
    if (connected) {
      service.dataSources().started(this, instanceId);
    }
  }

  @Override
  public void notifyDataSourceStopped(long instanceId) {
    state.checkThread();
    if (connected) {
      service.dataSources().stopped(this, instanceId);
    }
  }

  @Override
  public void activateTriggers(List<String> triggerNames) {
    state.checkThread();
    if (!connected) {
      return;
    }
    service.triggers().activate(this, triggerNames);
  }

  @Override
  public void sync(Runnable done) {
    state.checkThread();
    // Every command to the producer is a direct callback on this thread: all are out already.
    done.run();
  }

  @Override
  public void disconnect() {
    state.checkThread();
    if (connected) {
      unlink(null);
    }
  }

  /**
   * Copies one chunk of this producer into buffer bufferId. Returns null, or why the copy was
   * refused (the buffer is not one of this producer's sessions', or not the one its writer
   * registered for).
   */
  private String copyChunk(int writerId, int chunkId, int bufferId, int packetCount, int flags,
      boolean complete, MemorySegment src, long offset, long size) {
    TraceBuffer buf = state.buffer(bufferId);
    if (buf == null || buf.isReadOnly()) {
      counters.countDiscardedChunk(); // the session is gone or stopped: a late commit, not an offence
      return null;
    }
    if (!isAllowedTargetBuffer(bufferId)) {
      counters.countDiscardedChunk();
      return "write into a buffer of another session: buffer=" + bufferId + " writer=" + writerId;
    }
    Integer registered = writers.get(writerId);
    if (registered != null && registered != bufferId) {
      counters.countDiscardedChunk();
      return "writer registered for buffer " + registered + " wrote into buffer " + bufferId
          + ": writer=" + writerId;
    }
    buf.copyChunkUntrusted(id, identity.uid(), identity.pid(), identity.machineId(), writerId, chunkId,
        packetCount, flags, complete, src, offset, size);
    return null;
  }

  /** Unlinks this producer: scrapes its SMB, ends its data source instances, frees its state. */
  private void unlink(String reasonIfKicked) {
    scrapeSharedMemory();
    service.dataSources().producerGone(this);
    state.removeProducer(this);
    markDisconnected();
    if (reasonIfKicked != null) {
      LOG.log(System.Logger.Level.WARNING, "disconnecting producer {0} \"{1}\": {2}", id, name,
          reasonIfKicked);
      callbacks.onDisconnectedByService(reasonIfKicked);
    }
  }

  /** Marks the connection gone and frees the SMB (on unlinking, or when lockdown mode refused it). */
  void markDisconnected() {
    connected = false;
    writers.clear();
    allowedBuffers.clear();
    if (smb != null) {
      smb.close();
    }
  }

  private void violation(String what) {
    abiViolations++;
    counters.countAbiViolation();
    if (abiViolations <= 4) {
      LOG.log(System.Logger.Level.WARNING, "producer {0} \"{1}\": {2}", id, name, what);
    }
  }

  private void checkViolations() {
    if (connected && abiViolations > MAX_ABI_VIOLATIONS) {
      unlink("too many ABI violations: producer=" + id + " violations="
          + abiViolations);
    }
  }
}
