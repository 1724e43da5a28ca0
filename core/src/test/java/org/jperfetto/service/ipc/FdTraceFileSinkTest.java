package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.os.SharedMapping;
import org.jperfetto.os.UnixSocket;
import org.junit.jupiter.api.Test;

/** The write_into_file sink over a consumer's fd. */
class FdTraceFileSinkTest {
  @Test
  void appendsToTheFileBehindTheFdAndClosesTheFd() throws Exception {
    int fd = MemFd.create("trace", 0);
    int keep = Fds.dup(fd);
    int openBefore = Fds.openFdCount();
    try (FdTraceFileSink sink = FdTraceFileSink.adopt(fd)) {
      assertEquals(openBefore, Fds.openFdCount(), "the received fd was closed, the channel opened one");
      sink.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
      sink.write(ByteBuffer.wrap(new byte[] {4, 5}));
      assertEquals(0, MemFd.size(keep), "small writes are held back");
      sink.flush();
      assertEquals(5, sink.bytesWritten());
    }
    assertEquals(5, MemFd.size(keep));
    try (Arena arena = Arena.ofConfined()) {
      byte[] back = SharedMapping.map(keep, 5, arena).toArray(ValueLayout.JAVA_BYTE);
      assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, back);
    } finally {
      Fds.close(keep);
    }
  }

  @Test
  void smallWritesGoOutInBulkWhenTheBufferFillsAndAtFlushOrCloseInOrder() throws Exception {
    int fd = MemFd.create("trace", 0);
    int keep = Fds.dup(fd);
    int packets = 100_000; // 2.4 MB of 24-byte writes: the 1 MiB buffer fills twice
    byte[] expected = new byte[packets * 24];
    try (FdTraceFileSink sink = FdTraceFileSink.adopt(fd)) {
      for (int i = 0; i < packets; i++) {
        byte[] p = new byte[24];
        java.util.Arrays.fill(p, (byte) i);
        p[0] = (byte) (i >> 8);
        System.arraycopy(p, 0, expected, i * 24, 24);
        sink.write(ByteBuffer.wrap(p));
      }
      long beforeFlush = MemFd.size(keep);
      org.junit.jupiter.api.Assertions.assertTrue(beforeFlush >= 2L * (FdTraceFileSink.BUFFER_BYTES - 24)
          && beforeFlush < expected.length, "full buffers went out, the rest waits: " + beforeFlush);
      byte[] big = new byte[FdTraceFileSink.BUFFER_BYTES]; // larger than half the buffer: straight out
      sink.write(ByteBuffer.wrap(big));
      assertEquals(expected.length + big.length, MemFd.size(keep), "what was held back went first");
    }
    try (Arena arena = Arena.ofConfined()) {
      byte[] back = SharedMapping.map(keep, expected.length, arena).toArray(ValueLayout.JAVA_BYTE);
      assertArrayEquals(expected, back);
    } finally {
      Fds.close(keep);
    }
  }

  @Test
  void aSocketFdIsRefusedWithTheFdNamed() throws Exception {
    UnixSocket[] pair = UnixSocket.pair();
    int fd = Fds.dup(pair[0].fd());
    IOException e = assertThrows(IOException.class, () -> FdTraceFileSink.adopt(fd));
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("fd " + fd), e.getMessage());
    pair[0].close();
    pair[1].close();
  }
}
