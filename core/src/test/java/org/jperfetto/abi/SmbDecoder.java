package org.jperfetto.abi;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Test-only reassembly of the packets of one writer from copied chunks: chunk-id order, fragments
 * glued across consecutive chunks, patch-pending packets marked, the drop marker noted. The service's
 * own buffer does its reassembly elsewhere; this one checks the ABI side.
 */
final class SmbDecoder {
  /** A chunk as the service copied it: header fields and its used payload bytes. */
  record ChunkCopy(int chunkId, int writerId, int flags, int fragments, byte[] payload) {
    /** Copies the chunk {@code r} just read OK from {@code smb} (the drop marker's size field included). */
    static ChunkCopy of(UntrustedChunkReader r, MemorySegment smb) {
      int n = r.usedSize() + (r.writerDataDrop() ? PacketFragments.SIZE_FIELD_BYTES : 0);
      byte[] bytes = new byte[Math.min(n, r.payloadSize())];
      MemorySegment.copy(smb, ValueLayout.JAVA_BYTE, r.payloadOffset(), bytes, 0, bytes.length);
      return new ChunkCopy(r.chunkId(), r.writerId(), r.effectiveFlags(), r.usableFragments(), bytes);
    }
  }

  /** A reassembled packet. */
  record Packet(byte[] data, int firstChunkId, boolean glued, boolean patchPending) {}

  /** What the fragments looked like. */
  static final class Stats {
    int fragments;
    int oneByteSizes;
    int fourByteSizes;
    int otherSizes;
    int dropMarkers;
    final List<Integer> dropMarkerChunks = new ArrayList<>();
    int needsPatchingChunks;
    int gluedPackets;
    int lostFragments;
    int malformedChunks;
  }

  final Stats stats = new Stats();

  List<Packet> decode(List<ChunkCopy> chunks) {
    List<ChunkCopy> sorted = new ArrayList<>(chunks);
    sorted.sort((a, b) -> Integer.compareUnsigned(a.chunkId(), b.chunkId()));
    List<Packet> out = new ArrayList<>();
    ByteArrayOutputStream pending = null;
    int pendingFirst = 0;
    boolean pendingPatch = false;
    int prevId = 0;
    for (ChunkCopy c : sorted) {
      if ((c.flags() & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0) {
        stats.needsPatchingChunks++;
      }
      if (pending != null && c.chunkId() != prevId + 1) {
        pending = null; // a gap: the start of that packet is lost
        stats.lostFragments++;
      }
      prevId = c.chunkId();
      MemorySegment p = MemorySegment.ofArray(c.payload());
      long pos = 0;
      for (int i = 0; i < c.fragments(); i++) {
        long d = PacketFragments.decodeSize(p, pos, p.byteSize());
        if (d < 0 || (PacketFragments.size(d) != PacketFragments.DROP_PACKET_MARKER
            && PacketFragments.size(d) > p.byteSize() - pos - PacketFragments.headerBytes(d))) {
          stats.malformedChunks++;
          pending = null;
          break;
        }
        stats.fragments++;
        switch (PacketFragments.headerBytes(d)) {
          case 1 -> stats.oneByteSizes++;
          case 4 -> stats.fourByteSizes++;
          default -> stats.otherSizes++;
        }
        int size = PacketFragments.size(d);
        if (size == PacketFragments.DROP_PACKET_MARKER) {
          stats.dropMarkers++;
          stats.dropMarkerChunks.add(c.chunkId());
          pending = null;
          break;
        }
        byte[] frag = new byte[size];
        MemorySegment.copy(p, ValueLayout.JAVA_BYTE, pos + PacketFragments.headerBytes(d), frag, 0, size);
        pos += PacketFragments.headerBytes(d) + size;
        boolean first = i == 0;
        boolean last = i == c.fragments() - 1;
        boolean continuesFromPrev = first && (c.flags() & ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) != 0;
        boolean continuesOnNext = last && (c.flags() & ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) != 0;
        boolean patch = continuesOnNext && (c.flags() & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0;
        if (continuesFromPrev) {
          if (pending == null) {
            stats.lostFragments++;
            continue;
          }
          pending.writeBytes(frag);
          pendingPatch |= patch;
          if (!continuesOnNext) {
            out.add(new Packet(pending.toByteArray(), pendingFirst, true, pendingPatch));
            stats.gluedPackets++;
            pending = null;
          }
        } else {
          if (pending != null) {
            stats.lostFragments++;
            pending = null;
          }
          if (continuesOnNext) {
            pending = new ByteArrayOutputStream();
            pending.writeBytes(frag);
            pendingFirst = c.chunkId();
            pendingPatch = patch;
          } else {
            out.add(new Packet(frag, c.chunkId(), false, false));
          }
        }
      }
    }
    return out;
  }
}
