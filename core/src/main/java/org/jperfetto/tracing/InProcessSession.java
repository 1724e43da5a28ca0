package org.jperfetto.tracing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.OutputFds;
import org.jperfetto.consumer.TraceFileWriter;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;

/**
 * One tracing session of an {@link InProcessTracing} (upstream's {@code TracingSession}): its own
 * consumer connection to the embedded service. Set it up ({@link #writeTo} or {@link #readInto}),
 * {@link #start()} it, {@link #stop()} it; then the trace is in the file, in the stream, or in
 * {@link #readTrace()}.
 *
 * <p>Blocking like upstream's {@code StartBlocking}/{@code StopBlocking}: {@code start()} returns
 * once every data source of the session has started in this process's producer (a trace point
 * right after it is recorded), {@code stop()} once the trace is complete. Not for use from a data
 * source's callbacks (they run on the producer thread that {@code start()} and {@code stop()} wait
 * for).
 */
public final class InProcessSession implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(InProcessSession.class.getName());
  /** How long {@link #start()} waits for the data sources to start. */
  public static final Duration START_TIMEOUT = Duration.ofSeconds(10);
  /** Added to the config's flush and stop timeouts for how long {@link #stop()} waits. */
  static final Duration STOP_SLACK = Duration.ofSeconds(10);
  /** The service's flush and data source stop timeout when the config sets none. */
  static final long DEFAULT_TIMEOUT_MS = 5_000;
  /** What the SDK sends when its session is stopped (upstream's consumer SDK initiator). */
  static final FlushFlags SDK_TRACE_STOP =
      FlushFlags.of(FlushFlags.Initiator.CONSUMER_SDK, FlushFlags.Reason.TRACE_STOP);
  static final FlushFlags SDK_EXPLICIT = FlushFlags.of(FlushFlags.Initiator.CONSUMER_SDK, FlushFlags.Reason.EXPLICIT);

  /** Where a session is in its life. */
  public enum State {
    /** Created, not started: {@link #writeTo} may still be called. */
    NEW,
    /** Recording. */
    STARTED,
    /** Stopped (or never started and closed): the trace is complete. */
    STOPPED
  }

  private final InProcessTracing tracing;
  private final TraceConfig config;
  /** Whether start() warns about data sources no producer offers (a config the user gave). */
  private final boolean warnMissing;
  private Path file;
  private OutputStream stream;
  private State state = State.NEW;
  private TracingConsumer consumer;
  private TracingSession session;
  private String error = "";
  private byte[] trace;

  InProcessSession(InProcessTracing tracing, TraceConfig config, boolean warnMissing) {
    this.tracing = tracing;
    this.config = config;
    this.warnMissing = warnMissing;
  }

  /** The config as given. */
  public TraceConfig config() {
    return config;
  }

  /** Where the session is in its life now. */
  public synchronized State state() {
    return state;
  }

  /**
   * Writes the trace into file while the session runs (write_into_file with the config's
   * file_write_period_ms, and flush_period_ms set to the same period, else 5 s, if the config
   * sets none), instead of keeping it for {@link #readTrace()}. Before {@link #start()}.
   * The file is created or truncated at start.
   */
  public synchronized InProcessSession writeTo(Path file) {
    requireState(State.NEW, "writeTo");
    requireNoDestination("writeTo");
    this.file = Objects.requireNonNull(file, "file");
    return this;
  }

  /**
   * Reads the trace out into out as {@link #stop()} reads the buffers (in the trace file format,
   * batch by batch; out is flushed, not closed), instead of keeping it in memory for
   * {@link #readTrace()}: a large trace then never sits whole on the heap. Before {@link #start()}.
   */
  public synchronized InProcessSession readInto(OutputStream out) {
    requireState(State.NEW, "readInto");
    requireNoDestination("readInto");
    this.stream = Objects.requireNonNull(out, "out");
    return this;
  }

  private void requireNoDestination(String what) {
    if (file != null || stream != null) {
      throw new IllegalStateException(what + ": the session already has its destination");
    }
  }

  /**
   * Starts the session and waits until its data sources started in this process.
   *
   * @throws IllegalStateException if it was started or stopped before
   * @throws IOException if the service refused the config (the message is the service's), the file
   *     cannot be opened, or the data sources did not start within {@link #START_TIMEOUT}; the
   *     session is stopped then
   */
  public synchronized InProcessSession start() throws IOException {
    requireState(State.NEW, "start");
    try {
      consumer = TracingConsumer.connect(tracing.consumerSocket());
    } catch (IOException | RuntimeException e) {
      state = State.STOPPED;
      tracing.ended(this);
      throw e;
    }
    try {
      CompletableFuture<Void> started = new CompletableFuture<>();
      consumer.observeEvents(List.of(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED), events -> {
        if (events.getAllDataSourcesStarted()) {
          started.complete(null);
        }
      });
      session = file != null ? enableIntoFile() : consumer.enableTracing(config);
      if (config.getDeferredStart()) {
        consumer.startTracing();
      }
      CompletableFuture<Object> first = CompletableFuture.anyOf(started, session.disabled());
      await(first, START_TIMEOUT, "the session's data sources to start");
      if (!started.isDone()) {
        error = session.disabled().join().error();
        throw new IOException("the in-process service ended the session at start: " + error);
      }
      // The service sent every start before the event; the producer ran them before this answer.
      await(tracing.producer().sync(), START_TIMEOUT, "the producer's Sync");
      if (warnMissing) {
        warnAboutDataSourcesNotOffered();
      }
    } catch (IOException | RuntimeException e) {
      consumer.close();
      state = State.STOPPED;
      tracing.ended(this);
      throw e;
    }
    state = State.STARTED;
    return this;
  }

  /**
   * Logs a warning for each data source of the config that no producer of the service offers: a
   * misspelt name, or a data source not registered with {@link InProcessTracing}, records nothing.
   */
  private void warnAboutDataSourcesNotOffered() throws IOException {
    for (String name : await(consumer.dataSourcesNotOffered(config), START_TIMEOUT, "the service's state")) {
      LOG.log(Level.WARNING, "no producer offers data source \"" + name + "\": the session "
          + "records none of its data (misspelt, or not registered with InProcessTracing?)");
    }
  }

  private TracingSession enableIntoFile() throws IOException {
    TraceConfig.Builder c = config.toBuilder().setWriteIntoFile(true).clearOutputPath();
    if (config.getFlushPeriodMs() == 0) {
      // Periodic flushes with the periodic writes: each write then holds the data sources' recent
      // data, and trace_processor does not flag the trace (stat config_write_into_file_no_flush).
      c.setFlushPeriodMs(config.getFileWritePeriodMs() != 0
          ? config.getFileWritePeriodMs() : (int) TraceConfigs.DEFAULT_FILE_WRITE_PERIOD.toMillis());
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      // The consumer sends a duplicate of the fd; the service owns that one from here.
      return consumer.enableTracing(c.build(), OutputFds.fdOf(channel, file));
    }
  }

  /**
   * Asks every data source of the session to commit what it holds and waits for it (the session's
   * flush_timeout_ms, else 5 s). False if one did not in time.
   */
  public boolean flush() throws IOException {
    TracingConsumer c;
    synchronized (this) {
      requireState(State.STARTED, "flush");
      c = consumer;
    }
    try {
      await(c.flush(Duration.ZERO, SDK_EXPLICIT), stopTimeout(), "Flush");
      return true;
    } catch (IOException e) {
      LOG.log(Level.DEBUG, () -> "flush failed: " + e.getMessage());
      return false;
    }
  }

  /**
   * Stops the session and waits until the trace is complete: flushed, the data sources stopped, the
   * file written to its end (or the buffers read into memory for {@link #readTrace()}). A session
   * never started just ends; calling it again does nothing.
   *
   * @throws IOException if the service did not answer in time, the read back failed, or the trace
   *     file could not be written in full (the message names the file; {@link #error()} has it too)
   */
  public synchronized void stop() throws IOException {
    if (state != State.STARTED) {
      state = State.STOPPED;
      tracing.ended(this);
      return;
    }
    state = State.STOPPED;
    try {
      try {
        await(consumer.flush(Duration.ZERO, SDK_TRACE_STOP), stopTimeout(), "the final Flush");
      } catch (IOException e) {
        // Still stop: what was committed is kept (as the command line does).
        LOG.log(Level.DEBUG, () -> "final flush unsuccessful: " + e.getMessage());
      }
      consumer.disableTracing();
      TracingDisabled end = await(session.disabled(), stopTimeout(), "the session to stop");
      error = end.error();
      if (stream != null) {
        read(stream);
      } else if (file == null) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        read(bytes);
        trace = bytes.toByteArray();
      } else if (!error.isEmpty()) {
        throw new IOException("the trace file " + file + " is incomplete: " + error);
      }
    } finally {
      consumer.close();
      tracing.ended(this);
    }
  }

  /** Reads the buffers into out, flushed but left open (it is the caller's, or a byte array). */
  private void read(OutputStream out) throws IOException {
    TraceFileWriter writer = new TraceFileWriter(out);
    try {
      await(consumer.readBuffers(writer), stopTimeout(), "ReadBuffers");
    } finally {
      writer.flush();
    }
  }

  /**
   * The trace, in the Perfetto trace file format, after {@link #stop()}; empty for a session never
   * started.
   *
   * @throws IllegalStateException before stop, or for a session that wrote into a file or a stream
   */
  public synchronized byte[] readTrace() {
    if (state != State.STOPPED) {
      throw new IllegalStateException("readTrace before stop: state=" + state);
    }
    if (file != null) {
      throw new IllegalStateException("the session wrote its trace into " + file);
    }
    if (stream != null) {
      throw new IllegalStateException("the session read its trace into the stream readInto gave");
    }
    return trace != null ? trace.clone() : new byte[0];
  }

  /** What the service reported when the session ended, if it failed. */
  public synchronized Optional<String> error() {
    return error.isEmpty() ? Optional.empty() : Optional.of(error);
  }

  /** {@link #stop()}, failures logged. */
  @Override
  public void close() {
    try {
      stop();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "stopping the in-process session failed: " + e.getMessage());
    }
  }

  private Duration stopTimeout() {
    long flush = config.getFlushTimeoutMs() != 0
        ? Integer.toUnsignedLong(config.getFlushTimeoutMs()) : DEFAULT_TIMEOUT_MS;
    long stop = config.getDataSourceStopTimeoutMs() != 0
        ? Integer.toUnsignedLong(config.getDataSourceStopTimeoutMs()) : DEFAULT_TIMEOUT_MS;
    return Duration.ofMillis(flush + stop).plus(STOP_SLACK);
  }

  private void requireState(State expected, String what) {
    if (state != expected) {
      throw new IllegalStateException(what + " needs a session in state " + expected + ": state=" + state);
    }
  }

  private static <T> T await(Future<T> future, Duration timeout, String what) throws IOException {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException(what + " failed: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("no answer for " + what + " within " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for " + what, e);
    }
  }
}
