package org.jperfetto.producer.jfr;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import jdk.jfr.consumer.EventStream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import jdk.management.jfr.FlightRecorderMXBean;

/**
 * Another JVM's recording read in finished chunks, for a target whose FlightRecorderMXBean cannot
 * stream (JDK 11 to 15): about once a second a stopped clone of the recording is taken (which makes
 * the target's JFR end its current chunk, so the clone holds everything up to now), the chunks not
 * seen before are downloaded, parsed, and their events dispatched in chunk order, then the flush
 * actions run. Only what the bridge uses is supported: onEvent, onFlush, onError, onClose,
 * startAsync, stop (through {@link RemoteJfr#stop}) and close.
 */
final class RemoteChunkStream implements EventStream {
  /** How often the target's recording is cut and read. */
  static final Duration PERIOD = Duration.ofSeconds(1);
  /** How long the target keeps chunks (the clone re-reads the recording's chunks each time). */
  static final String MAX_AGE = "30 s";

  private final FlightRecorderMXBean recorder;
  private final long id;
  private final List<Consumer<RecordedEvent>> eventActions = new CopyOnWriteArrayList<>();
  private final List<Runnable> flushActions = new CopyOnWriteArrayList<>();
  private final List<Consumer<Throwable>> errorActions = new CopyOnWriteArrayList<>();
  private final List<Runnable> closeActions = new CopyOnWriteArrayList<>();
  /** Start times (epoch ns) of the chunks dispatched. */
  private final Set<Long> seen = new HashSet<>();
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile boolean stopping;
  private volatile boolean closed;
  private Thread reader;
  private Instant lastChunkStart;

  RemoteChunkStream(FlightRecorderMXBean recorder, Map<String, String> settings) throws IOException {
    this.recorder = recorder;
    try {
      this.id = recorder.newRecording();
      Map<String, String> options = new HashMap<>();
      options.put("name", "jperfetto " + id);
      options.put("disk", "true");
      options.put("maxAge", MAX_AGE);
      recorder.setRecordingOptions(id, options);
      recorder.setRecordingSettings(id, settings);
    } catch (RuntimeException e) {
      throw new IOException("cannot create a recording in the target: " + e, e);
    }
  }

  @Override
  public void startAsync() {
    recorder.startRecording(id);
    reader = Thread.ofPlatform().daemon().name("jvm.jfr chunks " + id).start(this::run);
  }

  @Override
  public void start() {
    startAsync();
    try {
      awaitTermination();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      while (!stopping && !closed) {
        Thread.sleep(PERIOD.toMillis());
        if (stopping || closed) {
          break;
        }
        long clone = recorder.cloneRecording(id, true);
        try {
          read(clone);
        } finally {
          recorder.closeRecording(clone);
        }
      }
    } catch (InterruptedException e) {
      // closed
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        errorActions.forEach(a -> a.accept(e));
      }
    } finally {
      ended.countDown();
    }
  }

  /** Ends the recording, reads what is left, and returns once it is dispatched. */
  void stop() {
    stopping = true;
    if (reader != null) {
      reader.interrupt();
      try {
        ended.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      recorder.stopRecording(id);
      read(id);
    } catch (IOException | RuntimeException e) {
      errorActions.forEach(a -> a.accept(e));
    }
  }

  /** Downloads the chunks of recording r not seen yet, dispatches their events, runs the flush actions. */
  private void read(long r) throws IOException {
    Map<String, String> options = new HashMap<>();
    if (lastChunkStart != null) {
      options.put("startTime", lastChunkStart.toString());
    }
    long stream = recorder.openStream(r, options);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try {
      for (byte[] b = recorder.readStream(stream); b != null; b = recorder.readStream(stream)) {
        bytes.write(b);
      }
    } finally {
      recorder.closeStream(stream);
    }
    ByteBuffer all = ByteBuffer.wrap(bytes.toByteArray());
    while (all.remaining() >= ChunkHeader.SIZE) {
      ChunkHeader h = ChunkHeader.at(all, all.position());
      if (h == null || h.size() > all.remaining()) {
        break;
      }
      if (seen.add(h.startNanos())) {
        dispatch(all, all.position(), (int) h.size());
        lastChunkStart = Instant.ofEpochSecond(0, h.startNanos());
      }
      all.position(all.position() + (int) h.size());
    }
    flushActions.forEach(Runnable::run);
  }

  private void dispatch(ByteBuffer all, int offset, int size) throws IOException {
    Path file = Files.createTempFile("jperfetto-chunk", ".jfr");
    try {
      Files.write(file, java.util.Arrays.copyOfRange(all.array(), offset, offset + size));
      try (RecordingFile f = new RecordingFile(file)) {
        while (f.hasMoreEvents()) {
          RecordedEvent e = f.readEvent();
          for (Consumer<RecordedEvent> a : eventActions) {
            a.accept(e);
          }
        }
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** The fields of a JFR chunk header this reader needs (big-endian, as JFR writes it). */
  record ChunkHeader(long size, long startNanos) {
    static final int SIZE = 68;
    private static final int MAGIC = 0x464c5200; // "FLR\0"

    static ChunkHeader at(ByteBuffer b, int offset) {
      if (b.getInt(offset) != MAGIC) {
        return null;
      }
      return new ChunkHeader(b.getLong(offset + 8), b.getLong(offset + 32));
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (reader != null) {
      reader.interrupt();
    }
    try {
      recorder.closeRecording(id);
    } catch (IOException | RuntimeException e) {
      // the target is gone, or the recording closed already
    }
    closeActions.forEach(Runnable::run);
  }

  @Override
  public void onEvent(Consumer<RecordedEvent> action) {
    eventActions.add(action);
  }

  @Override
  public void onEvent(String eventName, Consumer<RecordedEvent> action) {
    eventActions.add(e -> {
      if (e.getEventType().getName().equals(eventName)) {
        action.accept(e);
      }
    });
  }

  @Override
  public void onFlush(Runnable action) {
    flushActions.add(action);
  }

  @Override
  public void onError(Consumer<Throwable> action) {
    errorActions.add(action);
  }

  @Override
  public void onClose(Runnable action) {
    closeActions.add(action);
  }

  @Override
  public boolean remove(Object action) {
    return eventActions.remove(action) | flushActions.remove(action) | errorActions.remove(action)
        | closeActions.remove(action);
  }

  @Override
  public void setReuse(boolean reuse) {
    // events are always new objects here
  }

  @Override
  public void setOrdered(boolean ordered) {
    // dispatched in chunk order; within a chunk in the order JFR wrote them
  }

  @Override
  public void setStartTime(Instant startTime) {
    throw new UnsupportedOperationException("a chunk stream starts with its recording");
  }

  @Override
  public void setEndTime(Instant endTime) {
    throw new UnsupportedOperationException("a chunk stream ends with its recording");
  }

  @Override
  public void awaitTermination(Duration timeout) throws InterruptedException {
    ended.await(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  @Override
  public void awaitTermination() throws InterruptedException {
    ended.await();
  }
}
