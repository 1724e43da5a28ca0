package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * write_into_file into a pipe (a FIFO here): the caller, the service thread, never blocks on the
 * reader. A live reader gets every byte in order; a reader that stops reading makes a write fail
 * once it is {@link PipeWriter#MAX_QUEUED_BYTES} behind, at once, with a message that says so.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PipeTraceFileIT {
  @TempDir Path dir;

  private Path fifo() throws Exception {
    Path fifo = dir.resolve("trace.fifo");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertEquals(0, p.waitFor());
    return fifo;
  }

  /** Opens the sink on fifo while another thread opens its read end (each open waits for the other). */
  private static FdTraceFileSink openBoth(Path fifo, CompletableFuture<InputStream> reader) throws Exception {
    CompletableFuture.runAsync(() -> {
      try {
        reader.complete(Files.newInputStream(fifo));
      } catch (IOException e) {
        reader.completeExceptionally(e);
      }
    });
    return FdTraceFileSink.open(fifo, fifo.toString());
  }

  @Test
  void aLiveReaderGetsEveryByteInOrderAndEndOfFileAfterClose() throws Exception {
    Path fifo = fifo();
    CompletableFuture<InputStream> reader = new CompletableFuture<>();
    FdTraceFileSink sink = openBoth(fifo, reader);
    CompletableFuture<byte[]> read = reader.thenApplyAsync(in -> {
      try (in) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        in.transferTo(all);
        return all.toByteArray();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    byte[] expected = new byte[6 << 20];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = (byte) (i * 31 + (i >> 12));
    }
    for (int off = 0; off < expected.length; off += 4096) {
      sink.write(ByteBuffer.wrap(expected, off, 4096));
      if (off % (1 << 20) == 0) {
        sink.flush(); // as the service does after each periodic drain
      }
    }
    sink.close();
    assertArrayEquals(expected, read.get(30, TimeUnit.SECONDS));
    assertEquals(expected.length, sink.bytesWritten());
  }

  @Test
  void aReaderThatStopsFailsAWriteInsteadOfBlockingTheService() throws Exception {
    Path fifo = fifo();
    CompletableFuture<InputStream> reader = new CompletableFuture<>();
    FdTraceFileSink sink = openBoth(fifo, reader);
    InputStream neverRead = reader.get(10, TimeUnit.SECONDS);
    byte[] chunk = new byte[1 << 20];
    long start = System.nanoTime();
    IOException e = assertThrows(IOException.class, () -> {
      for (int i = 0; i < 64; i++) { // 64 MiB: far past the pipe's buffer and the queue's bound
        sink.write(ByteBuffer.wrap(chunk));
        sink.flush();
      }
    });
    assertTrue(e.getMessage().contains("fell") && e.getMessage().contains("behind"), e.getMessage());
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "failed, not blocked");
    sink.close(); // returns at once; the writer thread gives up after its timeout
    assertTrue(!sink.pipeFinished(), "still waiting for the reader");
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PipeWriter.CLOSE_TIMEOUT_MS + 10_000);
    while (!sink.pipeFinished() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertTrue(sink.pipeFinished(), "the writer thread ended after the close timeout");
    neverRead.close();
  }
}
