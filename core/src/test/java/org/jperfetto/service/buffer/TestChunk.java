package org.jperfetto.service.buffer;

import org.jperfetto.abi.ChunkHeader;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** Builds a chunk payload the way a TraceWriter lays it out: fragments, each a size varint + bytes. */
final class TestChunk {
  static final int FROM_PREV = ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK;
  static final int ON_NEXT = ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK;
  static final int PATCH = ChunkHeader.CHUNK_NEEDS_PATCHING;

  final int producerId;
  final int writerId;
  final int chunkId;
  int uid = 1000;
  int pid = 42;
  int flags;
  int numFragments;
  Integer declaredFragments;
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final List<Integer> fragmentStarts = new ArrayList<>();
  private int payloadSize = -1;

  private TestChunk(int producerId, int writerId, int chunkId) {
    this.producerId = producerId;
    this.writerId = writerId;
    this.chunkId = chunkId;
  }

  static TestChunk chunk(int producerId, int writerId, int chunkId) {
    return new TestChunk(producerId, writerId, chunkId);
  }

  /** Content of a fake packet: recognisable bytes derived from a tag. */
  static byte[] content(int size, int tag) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (tag * 31 + i);
    }
    return b;
  }

  /** A fragment with a 4-byte redundant size varint, as writers reserve it. */
  TestChunk fragment(byte[] data) {
    fragmentStarts.add(bytes.size());
    int n = data.length;
    bytes.write((n & 0x7F) | 0x80);
    bytes.write(((n >>> 7) & 0x7F) | 0x80);
    bytes.write(((n >>> 14) & 0x7F) | 0x80);
    bytes.write((n >>> 21) & 0x7F);
    bytes.writeBytes(data);
    numFragments++;
    return this;
  }

  /** A fragment whose size is compacted to one byte (writers since 2023, for sizes < 128). */
  TestChunk shortFragment(byte[] data) {
    if (data.length >= 128) {
      throw new IllegalArgumentException("one-byte size needs < 128 bytes");
    }
    fragmentStarts.add(bytes.size());
    bytes.write(data.length);
    bytes.writeBytes(data);
    numFragments++;
    return this;
  }

  TestChunk packet(int size, int tag) {
    return fragment(content(size, tag));
  }

  /** Raw bytes appended as they are (no size). */
  TestChunk raw(int... data) {
    for (int b : data) {
      bytes.write(b);
    }
    return this;
  }

  /** A fragment carrying the drop marker size (2^28 - 1) and nothing else. */
  TestChunk dropMarker() {
    fragmentStarts.add(bytes.size());
    bytes.writeBytes(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F});
    numFragments++;
    return this;
  }

  TestChunk flags(int f) {
    flags |= f;
    return this;
  }

  TestChunk declare(int fragments) {
    declaredFragments = fragments;
    return this;
  }

  /** Payload size as in an SMB chunk (fixed by the page layout); zero-filled after the data. */
  TestChunk payloadSize(int size) {
    payloadSize = size;
    return this;
  }

  TestChunk identity(int uid, int pid) {
    this.uid = uid;
    this.pid = pid;
    return this;
  }

  /** Offset in the payload of fragment i's size field (what a patch addresses). */
  int fragmentOffset(int i) {
    return fragmentStarts.get(i);
  }

  byte[] payload() {
    byte[] b = bytes.toByteArray();
    if (payloadSize < 0) {
      return b;
    }
    if (b.length > payloadSize) {
      throw new IllegalStateException("chunk content " + b.length + " > payload " + payloadSize);
    }
    byte[] out = new byte[payloadSize];
    System.arraycopy(b, 0, out, 0, b.length);
    return out;
  }

  void copyInto(TraceBuffer tb) {
    copyInto(tb, true);
  }

  void copyInto(TraceBuffer tb, boolean complete) {
    byte[] p = payload();
    // Put the payload behind an 8-byte chunk header in a fake SMB page, as the service passes it.
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(p.length + 16L);
      MemorySegment.copy(MemorySegment.ofArray(p), 0, smb, 16, p.length);
      tb.copyChunkUntrusted(producerId, uid, pid, writerId, chunkId,
          declaredFragments != null ? declaredFragments : numFragments, flags, complete, smb, 16,
          p.length);
    }
  }
}
