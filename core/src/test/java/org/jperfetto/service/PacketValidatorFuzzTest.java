package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.service.buffer.OverwritePolicy;
import org.jperfetto.service.buffer.TraceBuffer;
import org.jperfetto.wire.Varints;

/**
 * Coverage-guided fuzzing of {@link PacketValidator} (docs/fuzzing.md). The input is a packet's
 * bytes and where a writer cut it into fragments; the packet is written through a
 * {@link TraceBuffer} as one fragment per chunk and read back glued, so the validator sees it in
 * those slices. Its verdict must not depend on the cuts, and must match a plain whole-array reading
 * of the protobuf wire format: every top-level field well formed (varints of at most 10 bytes, no
 * groups or unknown wire types, lengths within 2^28-1 and within the packet) and none of the
 * fields only the service may write.
 */
class PacketValidatorFuzzTest {
  @FuzzTest
  void packets(FuzzedDataProvider data) {
    int cuts = data.consumeInt(0, 6);
    List<Integer> cutSizes = new ArrayList<>();
    for (int i = 0; i < cuts; i++) {
      cutSizes.add(data.consumeInt(0, 64));
    }
    byte[] packet = data.consumeRemainingAsBytes();
    List<byte[]> pieces = new ArrayList<>();
    int at = 0;
    for (int n : cutSizes) {
      int len = Math.min(n, packet.length - at);
      pieces.add(java.util.Arrays.copyOfRange(packet, at, at + len));
      at += len;
    }
    pieces.add(java.util.Arrays.copyOfRange(packet, at, packet.length));

    boolean expected = reference(packet);
    assertEquals(expected, validate(List.of(packet)), "whole packet, one slice");
    assertEquals(expected, validate(pieces), () -> "packet in " + pieces.size() + " slices");
  }

  /**
   * Found by this fuzz test: a length of 2^63 or more (a 10-byte varint) read as a negative long
   * passed the 2^28-1 check, and the field's contents were then read as more fields, so a packet
   * no protobuf reader accepts was handed out.
   */
  @org.junit.jupiter.api.Test
  void aLengthOfTwoToThe63OrMoreIsRejected() {
    byte[] packet = {
        0x12, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
        (byte) 0xff, (byte) 0xff, 0x01, // field 2, length 2^64-1
        0x08, 0x00, 0x0a, 0x01, 0x00}; // bytes that read as two well-formed fields
    assertEquals(false, reference(packet));
    assertEquals(false, validate(List.of(packet)));
  }

  /** Writes the pieces as consecutive chunks of one sequence, reads the glued packet, validates it. */
  private static boolean validate(List<byte[]> pieces) {
    long bytes = pieces.stream().mapToLong(p -> p.length + 64).sum();
    long pages = bytes / TraceBuffer.PAGE_SIZE + 1;
    try (TraceBuffer buffer = TraceBuffer.create(TraceBuffer.PAGE_SIZE * pages, OverwritePolicy.DISCARD)) {
      for (int i = 0; i < pieces.size(); i++) {
        byte[] piece = pieces.get(i);
        byte[] payload = new byte[4 + piece.length];
        Varints.writeRedundant(MemorySegment.ofArray(payload), 0, piece.length);
        System.arraycopy(piece, 0, payload, 4, piece.length);
        int flags = (i > 0 ? ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK : 0)
            | (i < pieces.size() - 1 ? ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK : 0);
        buffer.copyChunkUntrusted(1, 1000, 100, 1, i, 1, flags, true, MemorySegment.ofArray(payload), 0,
            payload.length);
      }
      BufferedPacket out = new BufferedPacket();
      buffer.beginRead();
      long total = pieces.stream().mapToLong(p -> p.length).sum();
      if (total == 0) {
        return PacketValidator.validate(out); // an empty packet is not handed out by the buffer
      }
      assertTrue(buffer.readNextTracePacket(out), "the glued packet reads back");
      assertEquals(total, out.size(), "packet size");
      return PacketValidator.validate(out);
    }
  }

  /** The protobuf wire format read from a whole array, field by field. */
  static boolean reference(byte[] b) {
    int[] pos = {0};
    while (pos[0] < b.length) {
      long tag = varint(b, pos);
      if (pos[0] < 0) {
        return false;
      }
      long field = tag >>> 3;
      for (int reserved : PacketValidator.RESERVED_FIELDS) {
        if (field == reserved) {
          return false;
        }
      }
      switch ((int) (tag & 7)) {
        case 0 -> {
          varint(b, pos);
          if (pos[0] < 0) {
            return false;
          }
        }
        case 1 -> pos[0] += 8;
        case 2 -> {
          long length = varint(b, pos);
          if (pos[0] < 0 || Long.compareUnsigned(length, (1L << 28) - 1) > 0) {
            return false;
          }
          pos[0] += (int) length;
        }
        case 5 -> pos[0] += 4;
        default -> {
          return false;
        }
      }
      if (pos[0] > b.length) {
        return false;
      }
    }
    return true;
  }

  /** A varint of at most 10 bytes at pos[0]; on a truncated or longer one, pos[0] becomes -1. */
  private static long varint(byte[] b, int[] pos) {
    long value = 0;
    for (int i = 0; i < 10; i++) {
      if (pos[0] >= b.length) {
        pos[0] = -1;
        return -1;
      }
      int x = b[pos[0]++];
      value |= (long) (x & 0x7f) << (7 * i);
      if (x >= 0) {
        return value;
      }
    }
    pos[0] = -1;
    return -1;
  }
}
