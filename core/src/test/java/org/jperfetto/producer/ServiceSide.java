package org.jperfetto.producer;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.abi.ChunkReadResult;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.abi.UntrustedChunkReader;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.service.buffer.OverwritePolicy;
import org.jperfetto.service.buffer.Patch;
import org.jperfetto.service.buffer.TraceBuffer;

/**
 * What the service does with CommitData, for tests: moves committed chunks out of the SMB into a
 * real {@link TraceBuffer} (freeing them), applies patches, and reads the packets back.
 */
final class ServiceSide {
  final SharedMemoryAbi abi;
  final UntrustedChunkReader reader;
  final TraceBuffer buffer;
  final List<Long> flushAcks = new ArrayList<>();
  long chunksMoved;
  long patchesApplied;
  long patchesFailed;
  long badChunks;

  ServiceSide(MemorySegment smb, int pageSize, long bufferBytes) {
    this.abi = new SharedMemoryAbi(smb, pageSize);
    this.reader = new UntrustedChunkReader(abi);
    this.buffer = TraceBuffer.create(bufferBytes, OverwritePolicy.DISCARD);
  }

  synchronized void commit(CommitDataRequest req) {
    for (CommitDataRequest.ChunksToMove m : req.getChunksToMoveList()) {
      ChunkReadResult r = reader.acquireCommitted(m.getPage(), m.getChunk());
      if (r != ChunkReadResult.OK) {
        badChunks++;
        continue;
      }
      buffer.copyChunkUntrusted(1, 1000, 42, reader.writerId(), reader.chunkId(), reader.packetCount(),
          reader.flags(), true, abi.segment(), reader.payloadOffset(), reader.payloadSize());
      reader.releaseAsFree();
      chunksMoved++;
    }
    for (CommitDataRequest.ChunkToPatch p : req.getChunksToPatchList()) {
      List<Patch> patches = new ArrayList<>();
      for (CommitDataRequest.ChunkToPatch.Patch x : p.getPatchesList()) {
        patches.add(new Patch(x.getOffset(), x.getData().toByteArray()));
      }
      if (buffer.tryPatchChunkContents(1, p.getWriterId(), p.getChunkId(), patches, p.getHasMorePatches())) {
        patchesApplied += patches.size();
      } else {
        patchesFailed += patches.size();
      }
    }
    if (req.hasFlushRequestId()) {
      flushAcks.add(req.getFlushRequestId());
    }
  }

  /** A packet read back: its writer, whether loss came before it, and its bytes. */
  record Read(int writerId, boolean previousDropped, byte[] data) {}

  private final List<Read> read = new ArrayList<>();

  /** Every packet read so far: reading the buffer consumes, so earlier reads are kept here. */
  synchronized List<Read> readAll() {
    List<Read> out = read;
    buffer.beginRead();
    BufferedPacket p = new BufferedPacket();
    while (buffer.readNextTracePacket(p)) {
      out.add(new Read(p.writerId(), p.previousPacketDropped(), p.toByteArray()));
    }
    return List.copyOf(out);
  }

  /**
   * The packets the buffer holds now, consumed and not kept (for long runs that check as they go;
   * do not mix with {@link #readAll()}).
   */
  synchronized List<Read> readNewOnly() {
    List<Read> out = new ArrayList<>();
    buffer.beginRead();
    BufferedPacket p = new BufferedPacket();
    while (buffer.readNextTracePacket(p)) {
      out.add(new Read(p.writerId(), p.previousPacketDropped(), p.toByteArray()));
    }
    return out;
  }
}
