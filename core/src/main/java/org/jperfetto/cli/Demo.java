package org.jperfetto.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jperfetto.consumer.ConsumerSockets;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.ipc.DefaultSockets;
import org.jperfetto.ipc.IpcException;
import org.jperfetto.os.ErrnoException;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.jfr.JfrDataSource;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.jperfetto.protos.TrackEventConfig;
import org.jperfetto.service.ClearPeriod;

/**
 * {@code jperfetto demo}: records a few seconds of {@link DemoWorkload}, a multi-threaded Java
 * program instrumented with the TrackEvent API, into a trace file for ui.perfetto.dev.
 *
 * <p>Recording: use the service on the consumer socket, else start the in-process jtraced (as the
 * main command does); connect the workload as a producer to that service's producer socket, wait
 * until the service lists its "track_event" data source, then record through the main command's
 * own path ({@code jperfetto --system -c - -o FILE}, config on stdin), so messages, Ctrl-C and exit
 * codes are the main command's.
 *
 * <p>{@code --producer}: only the workload, as a producer on the system producer socket, for the
 * given time (for a session someone else records, with jtraced or upstream traced).
 */
public final class Demo implements Subcommand {
  private static final System.Logger LOG = System.getLogger(Demo.class.getName());
  static final String NAME = "demo";
  static final String PRODUCER_NAME = "jperfetto-demo";
  static final String DEFAULT_OUT = "demo.perfetto-trace";
  static final String DEFAULT_TIME = "5s";
  /** How long to wait for the producer connection before saying nobody listens. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
  /** How long the service may take to list the workload's data source. */
  static final Duration REGISTER_TIMEOUT = Duration.ofSeconds(10);
  static final long POLL_MS = 50;
  static final int BUFFER_KB = 32 * 1024;
  static final int FLUSH_PERIOD_MS = 1_000;
  /** The JVM's own events (JFR: GC, JIT, locks, ...) next to the workload's slices. */
  static final String JFR_DATA_SOURCE = JfrDataSource.NAME;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "record an instrumented Java workload: demo [-o FILE] [-t TIME] [--system] | demo --producer -t TIME";
  }

  @Override
  public int run(String[] args, CliContext ctx) throws Exception {
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
    } catch (DemoOptions.UsageException e) {
      ctx.err().println("jperfetto demo: " + e.getMessage());
      ctx.err().println("Run jperfetto demo --help for the options.");
      return Jperfetto.EXIT_ERROR;
    }
    if (options.help()) {
      DemoOptions.usage(ctx.err());
      return Jperfetto.EXIT_ERROR; // as the main command's --help
    }
    return options.producerOnly() ? runProducer(options, ctx) : record(options, ctx);
  }

  // ---- jperfetto demo --producer ----

  // The workload is closed by hand before the producer (the resources would close the other way
  // round): its threads hand their last events over while the producer is still connected.
  @SuppressWarnings("try")
  private int runProducer(DemoOptions options, CliContext ctx) throws InterruptedException {
    PrintStream err = ctx.err();
    String socket = producerSocket(ctx.env());
    JfrDataSource.warmUpAsync();
    try (DemoWorkload workload = new DemoWorkload();
        TracingProducer producer = connectProducer(socket, workload)) {
      if (producer == null) {
        err.println("No tracing service listens on the producer socket " + socket + " (waited "
            + CONNECT_TIMEOUT.toSeconds() + " s). Start jtraced or traced first, set "
            + DefaultSockets.PRODUCER_ENV + ", or run 'jperfetto demo' to record without one.");
        return Jperfetto.EXIT_ERROR;
      }
      syncQuietly(producer);
      workload.start();
      err.println("Demo workload running as producer " + PRODUCER_NAME + " on " + socket + " for "
          + options.timeMs() + " ms (data sources " + TrackEvent.DATA_SOURCE_NAME + ", " + JFR_DATA_SOURCE + ")");
      try (StopSignals signals = StopSignals.install(err)) {
        try {
          signals.requested().get(options.timeMs(), TimeUnit.MILLISECONDS);
          err.println("Stopping the demo workload early.");
        } catch (TimeoutException e) {
          // the planned end
        } catch (ExecutionException e) {
          throw new IllegalStateException(e);
        }
      }
      workload.close(); // the threads hand their last events over before the producer goes
      syncQuietly(producer);
      err.println("Demo workload done");
      return Jperfetto.EXIT_OK;
    }
  }

  // ---- jperfetto demo [-o FILE] [-t TIME] ----

  private int record(DemoOptions options, CliContext ctx) throws InterruptedException {
    PrintStream err = ctx.err();
    String socket = ctx.env().get(DefaultSockets.CONSUMER_ENV);
    if (socket == null) {
      socket = ConsumerSockets.defaultPath();
    }
    JfrDataSource.warmUpAsync(); // JFR's set-up overlaps the service's start, not the session
    EmbeddedService embedded = null;
    TracingConsumer consumer = null;
    DemoWorkload workload = new DemoWorkload();
    TracingProducer producer = null;
    try {
      try {
        consumer = TracingConsumer.connect(socket);
      } catch (ErrnoException e) {
        if (options.system()) {
          err.println("Could not connect to the tracing service socket " + socket + " (" + e.errnoName()
              + "). Ensure jtraced or traced is running, or drop --system to use an in-process service.");
          return Jperfetto.EXIT_ERROR;
        }
        embedded = startEmbedded(socket, ctx);
        if (embedded == null) {
          return Jperfetto.EXIT_ERROR;
        }
        socket = embedded.consumerSocket();
        consumer = TracingConsumer.connect(socket);
      }
      String producerSocket = embedded != null ? DefaultSockets.split(embedded.producerSocket()).get(0)
          : producerSocket(ctx.env());
      producer = connectProducer(producerSocket, workload);
      if (producer == null) {
        err.println("The tracing service answers on " + socket + " but nothing listens on its producer socket "
            + producerSocket + " (waited " + CONNECT_TIMEOUT.toSeconds() + " s). Set "
            + DefaultSockets.PRODUCER_ENV + " to the service's producer socket.");
        return Jperfetto.EXIT_ERROR;
      }
      String registered = awaitRegistered(consumer, producer);
      if (registered != null) {
        err.println(registered);
        return Jperfetto.EXIT_ERROR;
      }
      consumer.close();
      consumer = null;
      workload.start();
      int code = recordThroughMainCommand(options, ctx, socket);
      if (code == Jperfetto.EXIT_OK && Files.isRegularFile(Path.of(options.out()))) {
        err.println();
        err.println("Demo trace: " + Path.of(options.out()).toAbsolutePath());
        err.println("Open it at https://ui.perfetto.dev (\"Open trace file\" in the left menu, or drag the file"
            + " onto the page). docs/demo.md says what to look at.");
      }
      return code;
    } catch (IOException e) {
      err.println("jperfetto demo: could not talk to the tracing service on " + socket + ": " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    } finally {
      workload.close();
      if (producer != null) {
        producer.close();
      }
      if (consumer != null) {
        consumer.close();
      }
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  /** The embedded service, started explicitly so the workload can connect before the session. */
  private static EmbeddedService startEmbedded(String socket, CliContext ctx) {
    List<EmbeddedService.Factory> factories = Plugins.all(EmbeddedService.Factory.class);
    EmbeddedService.Factory factory = factories.isEmpty() ? new EmbeddedJtraced(ctx.env()) : factories.get(0);
    try {
      EmbeddedService service = factory.start(socket);
      ctx.err().println("No tracing service on " + socket + ": started an in-process jtraced (consumer "
          + service.consumerSocket() + ", producers " + service.producerSocket()
          + "). Use --system to require an external service.");
      return service;
    } catch (IOException | RuntimeException e) {
      ctx.err().println("No tracing service answers on " + socket + " and the in-process service did not start: "
          + e.getMessage());
      return null;
    }
  }

  /**
   * Null once the service lists the workload's data source; else what went wrong. Services that do
   * not answer QueryServiceState are trusted after a producer Sync (the registration was processed
   * before it).
   */
  private static String awaitRegistered(TracingConsumer consumer, TracingProducer producer)
      throws InterruptedException {
    long pid = ProcessHandle.current().pid();
    long deadline = System.nanoTime() + REGISTER_TIMEOUT.toNanos();
    while (System.nanoTime() - deadline < 0) {
      TracingServiceState state;
      try {
        state = consumer.queryServiceState(false).get(REGISTER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof IpcException ipc) {
          // An older service, or one that lists the method without serving it.
          LOG.log(System.Logger.Level.DEBUG, "QueryServiceState unavailable ({0}): relying on the producer''s Sync",
              ipc.getMessage());
          return syncQuietly(producer) ? null : "The tracing service did not confirm the demo's data source";
        }
        return "QueryServiceState failed: " + Jperfetto.describe(e);
      } catch (TimeoutException e) {
        break;
      }
      if (lists(state, pid)) {
        return null;
      }
      Thread.sleep(POLL_MS);
    }
    return "The tracing service did not list the demo's " + TrackEvent.DATA_SOURCE_NAME + " data source within "
        + REGISTER_TIMEOUT.toSeconds() + " s";
  }

  /** Whether state lists a "track_event" data source of this process's demo producer. */
  static boolean lists(TracingServiceState state, long pid) {
    for (TracingServiceState.Producer p : state.getProducersList()) {
      if (!p.getName().equals(PRODUCER_NAME) || (p.getPid() != 0 && p.getPid() != pid)) {
        continue;
      }
      for (TracingServiceState.DataSource ds : state.getDataSourcesList()) {
        if (ds.getProducerId() == p.getId()
            && ds.getDsDescriptor().getName().equals(TrackEvent.DATA_SOURCE_NAME)) {
          return true;
        }
      }
    }
    return false;
  }

  private static int recordThroughMainCommand(DemoOptions options, CliContext ctx, String consumerSocket) {
    Map<String, String> env = new HashMap<>(ctx.env());
    env.put(DefaultSockets.CONSUMER_ENV, consumerSocket);
    CliContext main = new CliContext(new ByteArrayInputStream(config(options.timeMs()).toByteArray()),
        ctx.out(), ctx.err(), Map.copyOf(env), ctx.terminal());
    return Jperfetto.run(new String[] {"--system", "-c", "-", "-o", options.out()}, main);
  }

  /**
   * The demo session: every TrackEvent category, the JVM's events (jvm.jfr, default groups), plus
   * process names from a system's probes; its ring buffer cleared as the CLI's own configs are.
   */
  static TraceConfig config(long durationMs) {
    return TraceConfig.newBuilder()
        .setDurationMs((int) durationMs)
        .setFlushPeriodMs(FLUSH_PERIOD_MS)
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(BUFFER_KB))
        .setIncrementalStateConfig(CommandLineConfig.clearedEvery(ClearPeriod.DEFAULT_MS))
        .addDataSources(dataSource(DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME)
            .setTrackEventConfig(TrackEventConfig.newBuilder().addEnabledCategories("*"))))
        // The JVM's own events on the same thread tracks: the GCs the workload causes, JIT, contention.
        .addDataSources(dataSource(DataSourceConfig.newBuilder().setName(JFR_DATA_SOURCE)))
        // On a system with traced_probes these add process and thread names (jtraced skips them).
        .addDataSources(dataSource(DataSourceConfig.newBuilder().setName("linux.process_stats")))
        .addDataSources(dataSource(DataSourceConfig.newBuilder().setName("linux.system_info")))
        .build();
  }

  private static TraceConfig.DataSource dataSource(DataSourceConfig.Builder config) {
    return TraceConfig.DataSource.newBuilder().setConfig(config).build();
  }

  /** The workload's producer, connected; null (and closed) when nobody listens on socket in time. */
  private static TracingProducer connectProducer(String socket, DemoWorkload workload) throws InterruptedException {
    TracingProducer producer = TracingProducer.builder(PRODUCER_NAME).socketPath(socket)
        .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
        .dataSource(workload.dataSource())
        .dataSource(JfrDataSource.create()) // records only while a session enables it
        .start();
    if (producer.awaitConnected(CONNECT_TIMEOUT)) {
      return producer;
    }
    producer.close();
    return null;
  }

  /** Sync with the service (bounded); false when it did not answer. */
  private static boolean syncQuietly(TracingProducer producer) throws InterruptedException {
    try {
      producer.sync().get(CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /** The producer socket from env, else the system default (the first of a comma list). */
  static String producerSocket(Map<String, String> env) {
    String names = env.get(DefaultSockets.PRODUCER_ENV);
    if (names == null || names.isEmpty()) {
      return DefaultSockets.producer();
    }
    return DefaultSockets.split(names).get(0);
  }
}
