package org.jperfetto.producer.proto;

import java.lang.foreign.MemorySegment;
import org.jperfetto.wire.ProtoWire;

/**
 * UTF-8 encoding of Java strings straight into a {@link ScatteredStreamWriter}, without allocating.
 * The bytes equal {@code s.getBytes(UTF_8)}: a surrogate pair becomes one 4-byte sequence and an
 * unpaired surrogate becomes '?'.
 */
final class Utf8 {
  private Utf8() {}

  /** Bytes {@link #encode} may store past the end of the encoding (left stale inside the range). */
  static final int SLACK = 3;

  /** Number of bytes s takes in UTF-8. */
  static int encodedLength(String s) {
    int n = s.length();
    long bytes = 0;
    for (int i = 0; i < n; ) {
      if (s.charAt(i) < 0x80) {
        bytes++;
        i++;
        continue;
      }
      long e = encodeAt(s, i);
      bytes += byteCount(e);
      i += charCount(e);
    }
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("string too long for a proto field: utf8 bytes=" + bytes);
    }
    return (int) bytes;
  }

  /** Writes the UTF-8 of s, which takes encodedLength bytes, to out. */
  static void write(ScatteredStreamWriter out, String s, int encodedLength) {
    if (out.bytesAvailable() >= encodedLength + SLACK) {
      out.setWritePtr(encode(out.segment(), out.writePtr(), s));
      return;
    }
    for (int i = 0, n = s.length(); i < n; ) {
      long e = encodeAt(s, i);
      for (int k = 0, len = byteCount(e); k < len; k++) {
        out.writeByte((int) (e >>> (8 * k)));
      }
      i += charCount(e);
    }
  }

  /**
   * Encodes s at position p of seg and returns the end. The caller makes sure there is room for the
   * UTF-8 of s (at most 3 bytes per char) plus {@link #SLACK} bytes: ASCII goes 8 chars per store,
   * any other char as one 4-byte store of which its 1 to 4 bytes are kept.
   */
  static long encode(MemorySegment seg, long p, String s) {
    int n = s.length();
    int i = 0;
    while (i < n) {
      if (i + Long.BYTES <= n) {
        long block = 0;
        int or = 0;
        for (int k = 0; k < Long.BYTES; k++) {
          char c = s.charAt(i + k);
          or |= c;
          block |= (long) c << (8 * k);
        }
        if (or < 0x80) {
          seg.set(ProtoWire.LONG_LE, p, block);
          p += Long.BYTES;
          i += Long.BYTES;
          continue;
        }
      }
      long e = encodeAt(s, i);
      seg.set(ProtoWire.INT_LE, p, (int) e); // 4 bytes stored, byteCount of them kept
      p += byteCount(e);
      i += charCount(e);
    }
    return p;
  }

  /**
   * The UTF-8 of the char, or surrogate pair, at index i of s: the bytes in bits 0..31 (first byte
   * lowest), the byte count in bits 32..35, the chars used (1 or 2) in bits 36..37.
   */
  private static long encodeAt(String s, int i) {
    char c = s.charAt(i);
    if (c < 0x80) {
      return pack(c, 1, 1);
    }
    if (c < 0x800) {
      return pack((0xC0 | (c >>> 6)) | (0x80 | (c & 0x3F)) << 8, 2, 1);
    }
    if (!Character.isSurrogate(c)) {
      return pack((0xE0 | (c >>> 12)) | (0x80 | ((c >>> 6) & 0x3F)) << 8 | (0x80 | (c & 0x3F)) << 16, 3, 1);
    }
    if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
      int cp = Character.toCodePoint(c, s.charAt(i + 1));
      int bytes = (0xF0 | (cp >>> 18))
          | (0x80 | ((cp >>> 12) & 0x3F)) << 8
          | (0x80 | ((cp >>> 6) & 0x3F)) << 16
          | (0x80 | (cp & 0x3F)) << 24;
      return pack(bytes, 4, 2);
    }
    return pack('?', 1, 1); // unpaired surrogate, as String.getBytes(UTF_8) does
  }

  private static long pack(int bytes, int byteCount, int charCount) {
    return (bytes & 0xFFFF_FFFFL) | (long) byteCount << 32 | (long) charCount << 36;
  }

  private static int byteCount(long encoded) {
    return (int) (encoded >>> 32) & 0xF;
  }

  private static int charCount(long encoded) {
    return (int) (encoded >>> 36) & 0x3;
  }
}
