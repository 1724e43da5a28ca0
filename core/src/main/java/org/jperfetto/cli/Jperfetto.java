package org.jperfetto.cli;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jperfetto.BuildVersion;
import org.jperfetto.consumer.ConsumerSockets;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.OutputFds;
import org.jperfetto.consumer.TraceFileWriter;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.ipc.DefaultSockets;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.protos.CloneSessionRequest;
import org.jperfetto.protos.CloneSessionResponse;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.service.ClearPeriod;

/**
 * {@code jperfetto}: records a trace through a Perfetto tracing service, with upstream perfetto's
 * flags and exit codes (0 done, 1 error, 2 when --attach finds no session). When no service answers
 * on the consumer socket it starts an in-process one ({@link EmbeddedService}) unless
 * {@code --system} is given. {@code jperfetto NAME ...} runs a {@link Subcommand} instead.
 */
public final class Jperfetto {
  static final int EXIT_OK = 0;
  static final int EXIT_ERROR = 1;
  static final int EXIT_NOT_ATTACHED = 2;
  /** Added to the session's own timeouts before the command gives up waiting (as upstream). */
  static final long FAILSAFE_EXTRA_MS = 60_000;
  static final long READBACK_TIMEOUT_MS = 60_000;
  static final long QUERY_TIMEOUT_MS = 10_000;
  /** How long a recording's start waits to learn which data sources the service offers. */
  private static final long DATA_SOURCE_CHECK_TIMEOUT_MS = 2_000;
  static final long STATUS_PERIOD_MS = 500;
  static final String VERSION = BuildVersion.NAME;

  private final CliContext ctx;
  private final PrintStream err;
  private CliOptions options;

  private Jperfetto(CliContext ctx) {
    this.ctx = ctx;
    this.err = ctx.err();
  }

  public static void main(String[] args) {
    // The command as shipped: an in-process jtraced when no service answers (run() leaves the
    // choice to its caller, so tests decide what is embedded).
    Plugins.register(EmbeddedService.Factory.class, new EmbeddedJtraced(System.getenv()));
    shippedSubcommands().forEach(sub -> Plugins.register(Subcommand.class, sub));
    int code = run(args, CliContext.system());
    System.out.flush();
    System.exit(code);
  }

  /**
   * The commands {@code jperfetto NAME} runs as shipped. Benchmark and
   * build helpers (the reference producer, the AOT training) are not among them: they live in the
   * tools module, which users never get.
   */
  static List<Subcommand> shippedSubcommands() {
    return List.of(new Demo(), new TraceSummary(), new OpenCommand(), new TraceView(), new AttachCommand());
  }

  /** Runs one command line; returns the exit code. */
  public static int run(String[] args, CliContext ctx) {
    if (args.length > 0 && !args[0].startsWith("-")) {
      for (Subcommand sub : Plugins.all(Subcommand.class)) {
        if (sub.name().equals(args[0])) {
          try {
            return sub.run(List.of(args).subList(1, args.length).toArray(String[]::new), ctx);
          } catch (Exception e) {
            ctx.err().println("jperfetto " + args[0] + ": " + e.getMessage());
            return EXIT_ERROR;
          }
        }
      }
    }
    return new Jperfetto(ctx).run(args);
  }

  private int run(String[] args) {
    if (args.length == 0) {
      Usage.print(err);
      return EXIT_ERROR;
    }
    try {
      options = CliOptions.parse(args);
      if (options.version) {
        ctx.out().println(VERSION);
        return EXIT_OK;
      }
      if (options.help) {
        Usage.print(err);
        return EXIT_ERROR;
      }
      options.validate();
    } catch (CliOptions.UsageException e) {
      err.println("jperfetto: " + e.getMessage());
      err.println("Run jperfetto --help for the options.");
      return EXIT_ERROR;
    }
    try {
      if (options.query) {
        return withService(this::query);
      }
      if (options.isAttach()) {
        return withService(this::attach);
      }
      return record();
    } catch (CommandLineConfig.ConfigException | CliError e) {
      err.println(e.getMessage());
      return EXIT_ERROR;
    }
  }

  /** The one line a config file gets whose ring buffer would read as empty once wrapped. */
  static final String RING_WITHOUT_CLEAR_WARNING = "jperfetto: warning: a ring buffer without "
      + "incremental_state_config may read as empty once it wraps (traced will not clear it; jtraced clears every "
      + ClearPeriod.DEFAULT_MS + " ms); add: incremental_state_config { clear_period_ms: " + ClearPeriod.DEFAULT_MS
      + " }";

  /** An error with a message for the user; exit code 1. */
  private static final class CliError extends Exception {
    CliError(String message) {
      super(message);
    }
  }

  private interface ServiceAction {
    int run(TracingConsumer consumer) throws Exception;
  }

  private int record() throws CommandLineConfig.ConfigException, CliError {
    TraceConfig config;
    if (options.configFile != null) {
      config = CommandLineConfig.parse(readConfig(), options.configFile, options.txt, options.txtLossy);
      if (ClearPeriod.wrapsUnreadable(config)) {
        err.println(RING_WITHOUT_CLEAR_WARNING);
      }
    } else if (options.hasLightOptions()) {
      config = CommandLineConfig.fromOptions(options);
    } else if (options.isClone()) {
      config = TraceConfig.getDefaultInstance();
    } else {
      throw new CliError("The TraceConfig is empty");
    }
    config = CommandLineConfig.finish(config, options.attributes);
    boolean writeIntoFile = config.getWriteIntoFile();
    if (!config.getOutputPath().isEmpty()) {
      if (!writeIntoFile) {
        throw new CliError("output_path in the trace config needs write_into_file: true");
      }
      if (options.out != null) {
        throw new CliError("Can't pass --out if output_path is set in the trace config");
      }
      if (Files.exists(Path.of(config.getOutputPath()))) {
        throw new CliError("The output_path must not exist, the service cannot overwrite existing "
            + "files. Remove " + config.getOutputPath() + " or use a different path.");
      }
    } else if (options.out == null) {
      throw new CliError("Either --out or --upload is required (jperfetto has no --upload: use --out)");
    } else if (options.isDetach() && !writeIntoFile) {
      throw new CliError("TraceConfig's write_into_file must be true when using --detach");
    }
    Output output = options.out == null ? null : Output.open(options.out, options.noClobber, ctx.out());
    if (options.background) {
      try {
        long pid = Background.relaunch(options.raw);
        ctx.out().println(pid);
        return EXIT_OK;
      } catch (IOException e) {
        throw new CliError("--background: cannot start the background process: " + e.getMessage());
      } finally {
        if (output != null) {
          output.closeQuietly();
        }
      }
    }
    if (options.open && (output == null || output.path() == null || options.isDetach())) {
      if (output != null) {
        output.closeQuietly();
      }
      throw new CliError("--open needs a trace file: -o FILE (not stdout, not --detach)");
    }
    TraceConfig finalConfig = config;
    int code;
    try {
      code = withService(consumer -> options.isClone() ? clone(consumer, output)
          : trace(consumer, finalConfig, output));
    } finally {
      if (output != null) {
        output.closeQuietly();
      }
    }
    if (code != EXIT_OK || !options.open) {
      return code;
    }
    try {
      return OpenCommand.serveOnce(output.path(), OpenCommand.UI_PORT, true, ctx);
    } catch (IOException e) {
      throw new CliError("--open: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return EXIT_ERROR;
    }
  }

  private byte[] readConfig() throws CliError {
    try {
      return options.configFile.equals("-") ? ctx.in().readAllBytes()
          : Files.readAllBytes(Path.of(options.configFile));
    } catch (IOException e) {
      throw new CliError("Could not open " + options.configFile + ": " + e.getMessage());
    }
  }

  /** Connects (starting an embedded service when allowed), runs {@code action}, cleans up. */
  private int withService(ServiceAction action) throws CliError {
    String socket = ctx.env().getOrDefault(DefaultSockets.CONSUMER_ENV, null);
    if (socket == null) {
      socket = ConsumerSockets.defaultPath();
    }
    TracingConsumer consumer;
    EmbeddedService embedded = null;
    try {
      consumer = TracingConsumer.connect(socket);
    } catch (ErrnoException e) {
      if (options.system) {
        throw new CliError("Could not connect to the tracing service socket " + socket + " ("
            + e.errnoName() + "). Ensure jtraced or traced is running, or drop --system to use an "
            + "in-process service.");
      }
      embedded = startEmbedded(socket);
      try {
        consumer = TracingConsumer.connect(embedded.consumerSocket());
      } catch (IOException e2) {
        embedded.close();
        throw new CliError("Could not connect to the in-process service at " + embedded.consumerSocket()
            + ": " + e2.getMessage());
      }
    } catch (IOException e) {
      throw new CliError("Could not talk to the tracing service on " + socket + ": " + e.getMessage());
    }
    try {
      return action.run(consumer);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("Interrupted");
      return EXIT_ERROR;
    } catch (CliError e) {
      err.println(e.getMessage());
      return EXIT_ERROR;
    } catch (Exception e) {
      err.println("jperfetto: " + describe(e));
      return EXIT_ERROR;
    } finally {
      consumer.close();
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private EmbeddedService startEmbedded(String socket) throws CliError {
    List<EmbeddedService.Factory> factories = Plugins.all(EmbeddedService.Factory.class);
    if (factories.isEmpty()) {
      throw new CliError("No tracing service answers on " + socket + " and this jperfetto has no "
          + "in-process service built in. Start jtraced (or traced) first.");
    }
    try {
      EmbeddedService service = factories.get(0).start(socket);
      err.println("No tracing service on " + socket + ": started an in-process jtraced (consumer "
          + service.consumerSocket() + ", producers " + service.producerSocket()
          + "). Use --system to require an external service.");
      return service;
    } catch (IOException | RuntimeException e) {
      throw new CliError("No tracing service answers on " + socket
          + " and the in-process service did not start: " + e.getMessage());
    }
  }

  private int query(TracingConsumer consumer) throws Exception {
    TracingServiceState state = await(consumer.queryServiceState(false), QUERY_TIMEOUT_MS, "QueryServiceState");
    if (options.queryRaw) {
      state.writeTo(ctx.out());
    } else {
      ServiceStatePrinter.print(state, options.queryLong, ctx.out());
    }
    ctx.out().flush();
    return EXIT_OK;
  }

  private int attach(TracingConsumer consumer) throws Exception {
    TracingSession session;
    try {
      session = await(consumer.attach(options.attachKey), QUERY_TIMEOUT_MS, "Attach");
    } catch (ExecutionException e) {
      if (!options.isDetached) {
        err.println("Session re-attach failed. Check service logs for details");
      }
      return EXIT_NOT_ATTACHED;
    }
    if (options.isDetached) {
      await(consumer.detach(options.attachKey), QUERY_TIMEOUT_MS, "Detach");
      return EXIT_OK;
    }
    TracingDisabled end;
    try (StopSignals signals = StopSignals.install(err)) {
      if (options.stop) {
        stop(consumer);
      } else {
        signals.requested().thenRun(() -> stop(consumer));
      }
      end = waitForEnd(consumer, session, 0);
    }
    if (end == null) {
      return EXIT_ERROR;
    }
    if (!end.ok()) {
      err.println("Service error: " + end.error());
      return EXIT_ERROR; // upstream's perfetto exits 0 here (a legacy of its guardrails); a refusal is a failure
    }
    err.println("Trace written into the output file");
    return EXIT_OK;
  }

  private int trace(TracingConsumer consumer, TraceConfig config, Output output) throws Exception {
    // Handlers first: a signal that comes while the session is being enabled still stops it cleanly.
    try (StopSignals signals = StopSignals.install(err)) {
      return trace(consumer, config, output, signals);
    }
  }

  private int trace(TracingConsumer consumer, TraceConfig config, Output output, StopSignals signals)
      throws Exception {
    long expected = config.getDurationMs() != 0 ? Integer.toUnsignedLong(config.getDurationMs())
        : Integer.toUnsignedLong(config.getTriggerConfig().getTriggerTimeoutMs());
    err.println(expected > 0
        ? "Connected to the tracing service, TTL: " + (expected + 999) / 1000 + "s"
        : "Connected to the tracing service, starting tracing");
    boolean writeIntoFile = config.getWriteIntoFile() && config.getOutputPath().isEmpty();
    TracingSession session;
    if (writeIntoFile) {
      session = consumer.enableTracing(config, output.fd());
    } else {
      session = consumer.enableTracing(config);
    }
    warnAboutDataSourcesNotOffered(consumer, config);
    if (options.isDetach()) {
      try {
        await(consumer.detach(options.detachKey), QUERY_TIMEOUT_MS, "Detach");
        return EXIT_OK;
      } catch (ExecutionException e) {
        err.println("Session detach failed: " + describe(e.getCause()));
        return EXIT_ERROR;
      }
    }
    long failsafe = expected > 0 ? expected + FAILSAFE_EXTRA_MS + Integer.toUnsignedLong(config.getFlushTimeoutMs())
        + Integer.toUnsignedLong(config.getDataSourceStopTimeoutMs()) : 0;
    signals.requested().thenAccept(name -> {
      err.println("\n" + name + " received: disabling tracing.");
      stop(consumer);
    });
    TracingDisabled end = waitForEnd(consumer, session, failsafe);
    if (end == null) {
      return EXIT_ERROR;
    }
    if (!end.ok()) {
      err.println("Service error: " + end.error());
      if (output != null) {
        output.removeIfEmpty();
      }
      return EXIT_ERROR; // upstream's perfetto exits 0 here (a legacy of its guardrails); a refusal is a failure
    }
    if (config.getWriteIntoFile()) {
      err.println("Trace written into the output file");
      return EXIT_OK;
    }
    return readBack(consumer, output); // a signal now changes nothing: the read is under way
  }

  /**
   * Says which of the config's data sources no connected producer offers (see {@link
   * DataSourceCheck}); a service that cannot say (an error, a time-out) gets no warning.
   */
  private void warnAboutDataSourcesNotOffered(TracingConsumer consumer, TraceConfig config)
      throws InterruptedException {
    TracingServiceState state;
    try {
      state = await(consumer.queryServiceState(false), DATA_SOURCE_CHECK_TIMEOUT_MS, "QueryServiceState");
    } catch (ExecutionException | TimeoutException e) {
      return;
    }
    // The extras the light options add are best effort: only what the user asked for is named.
    List<String> quiet = options.configFile == null ? CommandLineConfig.QUIET_EXTRAS : List.of();
    DataSourceCheck.warnings(config, state, quiet).forEach(err::println);
  }

  private int clone(TracingConsumer consumer, Output output) throws Exception {
    CloneSessionRequest.Builder request = CloneSessionRequest.newBuilder();
    if (options.cloneSessionId != null) {
      request.setSessionId(options.cloneSessionId);
    } else {
      request.setUniqueSessionName(options.cloneName);
    }
    CloneSessionResponse response = await(consumer.cloneSession(request.build(), output.fd()),
        READBACK_TIMEOUT_MS, "CloneSession");
    if (!response.getSuccess()) {
      String name = options.cloneSessionId != null ? Long.toUnsignedString(options.cloneSessionId)
          : "\"" + options.cloneName + "\"";
      err.println("Service error: Failed to clone tracing session " + name + ": " + response.getError());
      output.removeIfEmpty();
      return EXIT_ERROR;
    }
    if (response.getWasWriteIntoFile()) {
      err.println("Trace written into the output file");
      return EXIT_OK;
    }
    return readBack(consumer, output);
  }

  private int readBack(TracingConsumer consumer, Output output) throws Exception {
    FailureRecordingSink writer = new FailureRecordingSink(new TraceFileWriter(output.stream()));
    try {
      await(consumer.readBuffers(writer), READBACK_TIMEOUT_MS, "ReadBuffers");
      writer.file.flush();
    } catch (ExecutionException | TimeoutException e) {
      if (writer.failure != null) {
        return writeFailed(output, writer.failure);
      }
      try {
        writer.file.flush();
      } catch (IOException flushFailure) {
        return writeFailed(output, flushFailure);
      }
      err.println("Failed to read the trace back: " + describe(e instanceof ExecutionException ? e.getCause() : e));
      return EXIT_ERROR;
    } catch (IOException e) {
      return writeFailed(output, e);
    }
    TraceFileWriter file = writer.file;
    err.println("Wrote " + file.bytesWritten() + " bytes into " + output.name());
    return EXIT_OK;
  }

  private int writeFailed(Output output, IOException e) {
    err.println("Failed to write the trace into " + output.name() + ": " + e.getMessage());
    return EXIT_ERROR;
  }

  /** The trace file's writer, remembering a write failure (which ends the read). */
  private static final class FailureRecordingSink implements org.jperfetto.consumer.TracePacketSink {
    final TraceFileWriter file;
    IOException failure;

    FailureRecordingSink(TraceFileWriter file) {
      this.file = file;
    }

    @Override
    public void onPacket(List<com.google.protobuf.ByteString> slices, int size) throws IOException {
      try {
        file.onPacket(slices, size);
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }
  }

  /** Flush, then stop: what Ctrl-C and --attach --stop do (a failed flush still stops). */
  private void stop(TracingConsumer consumer) {
    consumer.flush(Duration.ZERO, FlushFlags.CMD_TRACE_STOP).whenComplete((ok, failure) -> {
      if (failure != null) {
        err.println("Final flush unsuccessful.");
      }
      consumer.disableTracing();
    });
  }

  /**
   * Waits for the session's end, showing the status line on a terminal. Null (after saying why)
   * when the connection is lost or the failsafe timeout passes.
   */
  private TracingDisabled waitForEnd(TracingConsumer consumer, TracingSession session, long failsafeMs)
      throws InterruptedException {
    StatusLine status = new StatusLine(err, ctx.terminal(), failsafeMs > 0 ? failsafeMs - FAILSAFE_EXTRA_MS : 0);
    long deadline = failsafeMs > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(failsafeMs) : Long.MAX_VALUE;
    CompletableFuture<TracingDisabled> disabled = session.disabled();
    try {
      while (true) {
        try {
          TracingDisabled end = disabled.get(STATUS_PERIOD_MS, TimeUnit.MILLISECONDS);
          status.clear();
          if (!consumer.isConnected() && !end.ok()) {
            err.println("Disconnected from the tracing service: " + end.error());
            return null;
          }
          return end;
        } catch (TimeoutException e) {
          if (System.nanoTime() - deadline > 0) {
            status.clear();
            err.println("Timed out while waiting for trace from the service, aborting");
            return null;
          }
          if (status.enabled()) {
            consumer.getTraceStats().thenAccept(status::update);
          }
        } catch (ExecutionException e) {
          status.clear();
          err.println("jperfetto: " + describe(e.getCause()));
          return null;
        }
      }
    } finally {
      status.clear();
    }
  }

  private static <T> T await(CompletableFuture<T> future, long timeoutMs, String what)
      throws ExecutionException, InterruptedException, TimeoutException {
    try {
      return future.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new TimeoutException(what + ": no answer from the service within " + timeoutMs + " ms");
    }
  }

  static String describe(Throwable t) {
    Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
    if (cause instanceof IpcException ipc && ipc.kind() == IpcException.Kind.METHOD_NOT_FOUND) {
      return "the tracing service does not support this (" + ipc.getMessage() + "); it is likely older "
          + "than this jperfetto";
    }
    return cause.getMessage() != null ? cause.getMessage() : cause.toString();
  }

  /** The output file (or stdout for "-"). */
  private record Output(String name, OutputStream stream, Path path, FileOutputStream file) {
    static Output open(String out, boolean noClobber, PrintStream stdout) throws CliError {
      if (out.equals("-")) {
        return new Output("stdout", stdout, null, null);
      }
      Path path = Path.of(out);
      try {
        if (noClobber) {
          Files.newByteChannel(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
        }
        FileOutputStream file = new FileOutputStream(path.toFile());
        return new Output(out, file, path, file);
      } catch (FileAlreadyExistsException e) {
        throw new CliError("Error: Output file '" + out + "' already exists, refusing to overwrite due to "
            + "'--no-clobber'.");
      } catch (IOException e) {
        throw new CliError("Failed to open " + out + ": " + e.getMessage());
      }
    }

    /** The fd to hand the service for write_into_file. */
    int fd() throws IOException {
      if (file == null) {
        return 1; // stdout
      }
      return OutputFds.fdOf(file.getChannel(), path);
    }

    void removeIfEmpty() {
      try {
        // A regular file only: as root, /dev/full (size 0) would be deleted otherwise.
        if (path != null && Files.isRegularFile(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)
            && Files.size(path) == 0) {
          closeQuietly();
          Files.deleteIfExists(path);
        }
      } catch (IOException e) {
        // leave it
      }
    }

    void closeQuietly() {
      try {
        if (file != null) {
          file.close();
        } else {
          stream.flush();
        }
      } catch (IOException e) {
        // nothing more to do
      }
    }
  }
}
