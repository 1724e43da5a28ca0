package org.jperfetto.service.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Writes a write_into_file session's trace into a pipe without ever blocking the service
 * thread: the bytes go to a queue that one writer thread empties into the channel as fast as the
 * reader takes them. The queue is bounded ({@link #MAX_QUEUED_BYTES}); a reader that falls that far
 * behind (one that stopped reading) fails the next write, which ends the session with that error, as
 * any failed write of the trace file does. Once closed, the writer thread writes out what is queued
 * and closes the channel; if the reader still takes nothing after {@link #CLOSE_TIMEOUT_MS}, the
 * thread is interrupted, which closes the channel and gives the reader end of file.
 */
final class PipeWriter {
  /** How far the reader may fall behind before the trace file is given up. */
  static final long MAX_QUEUED_BYTES = 8L << 20;
  /** How long a closed writer waits for a reader that takes nothing (upstream's IPC send timeout). */
  static final long CLOSE_TIMEOUT_MS = 10_000;
  private static final ByteBuffer END = ByteBuffer.allocate(0);

  private final FileChannel channel;
  private final String name;
  private final LinkedBlockingQueue<ByteBuffer> queue = new LinkedBlockingQueue<>();
  private final Thread thread;
  private long queued;
  private volatile IOException failure;

  PipeWriter(FileChannel channel, String name) {
    this.channel = channel;
    this.name = name;
    this.thread = Thread.ofPlatform().daemon().name("jtraced-file-writer " + name).start(this::run);
  }

  /** Queues a copy of data's remaining bytes. */
  void write(ByteBuffer data) throws IOException {
    IOException failed = failure;
    if (failed != null) {
      throw failed;
    }
    int n = data.remaining();
    synchronized (this) {
      if (queued + n > MAX_QUEUED_BYTES) {
        throw new IOException("the reader of " + name + " fell " + (queued >> 20)
            + " MiB behind (it stopped reading?): the trace is no longer written into it");
      }
      queued += n;
    }
    ByteBuffer copy = ByteBuffer.allocate(n).put(data).flip();
    queue.add(copy);
  }

  /** Ends the stream: what is queued is written, then the channel closed (never blocks the caller). */
  void close() {
    queue.add(END);
    CompletableFuture.delayedExecutor(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS).execute(thread::interrupt);
  }

  /** Whether the writer thread has finished (tests). */
  boolean finished() {
    return !thread.isAlive();
  }

  private void run() {
    try {
      for (ByteBuffer b = queue.take(); b != END; b = queue.take()) {
        int n = b.remaining();
        while (b.hasRemaining()) {
          channel.write(b);
        }
        synchronized (this) {
          queued -= n;
        }
      }
    } catch (IOException e) {
      failure = new IOException("writing the trace file " + name + " failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        channel.close();
      } catch (IOException e) {
        // nothing more to write or to tell
      }
    }
  }
}
