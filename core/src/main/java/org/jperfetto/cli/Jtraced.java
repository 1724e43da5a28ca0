package org.jperfetto.cli;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.jperfetto.service.ClearPeriod;
import org.jperfetto.service.ServiceLimits;
import org.jperfetto.service.ipc.PosixClockSource;
import org.jperfetto.service.ipc.ProducerRelay;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.ipc.DefaultSockets;

/**
 * The {@code jtraced} daemon: the tracing service on its producer and consumer sockets.
 *
 * <pre>
 * jtraced [--producer-socket PATH[,PATH...]] [--consumer-socket PATH]
 *         [--consumer-socket-mode OCTAL] [--background [--log-file FILE]] [-v | --log-level LEVEL]
 *         [--max-buffer-memory SIZE] [--default-clear-period TIME]
 *         [--enable-relay-endpoint | --enable-relay-endpoint-on SOCKET ...]
 * jtraced --relay [--relay-socket HOST:PORT] [--producer-socket PATH[,PATH...]]
 * </pre>
 *
 * Paths default to $PERFETTO_PRODUCER_SOCK_NAME / $PERFETTO_CONSUMER_SOCK_NAME, else
 * /run/perfetto/traced-{producer,consumer}.sock when /run/perfetto/ is accessible, else
 * /tmp/perfetto-{producer,consumer}. Once listening it prints one line,
 * {@code jtraced: listening on producer=... consumer=...}. SIGTERM or Ctrl-C closes the sockets,
 * removes their files and exits with status 0.
 *
 * <p>--max-buffer-memory (e.g. 512mb, 8gb): the trace buffers of all sessions together may not
 * be larger; EnableTracing of a session that would pass it fails with an error naming the budget
 * (the consumer prints it). Default: half the machine's RAM (4 GiB if /proc/meminfo is unreadable).
 * Buffer pages are committed as data arrives, so this bounds what sessions may grow to.
 *
 * <p>--default-clear-period (e.g. 500ms, 2s; 0: off): a session with a ring buffer whose config
 * sets no incremental_state_config.clear_period_ms has its data sources' incremental state cleared
 * this often, so the last part of a ring that wrapped stays readable (see {@link ClearPeriod});
 * upstream's traced does not do this. Default {@link ClearPeriod#DEFAULT_MS} ms.
 *
 * <p>Once serving, jtraced warms its JIT up beside the real service on a thread of the lowest
 * priority ({@link JtracedWarmUp}), so that the first burst into it meets compiled code;
 * {@code JPERFETTO_WARMUP=0} leaves that out.
 *
 * <p>--background: a JVM cannot fork, so jtraced starts itself again (same java, same JVM and
 * program arguments minus --background) under setsid when available, with stdin from /dev/null and
 * stdout/stderr appended to the log file (default /tmp/jtraced.log); the first process waits until
 * the second printed its ready line (or failed), prints the child's pid and exits.
 */
public final class Jtraced {
  static final String READY_PREFIX = "jtraced: listening on ";
  private static final long BACKGROUND_START_TIMEOUT_MS = 20_000;

  private Jtraced() {}

  /**
   * @param relayEndpoints the producer sockets that serve RelayPort too (--enable-relay-endpoint:
   *     all of them; --enable-relay-endpoint-on SOCKET: that one)
   * @param relayTo relay mode's host (--relay-socket, else $PERFETTO_RELAY_SOCK_NAME with --relay);
   *     null: jtraced is the tracing service
   */
  record Args(String producerSockets, String consumerSocket, int consumerSocketMode,
      boolean background, String logFile, Level logLevel, long maxBufferBytes, Set<String> relayEndpoints,
      String relayTo, int defaultClearPeriodMs) {}

  public static void main(String[] argv) {
    Args args;
    if (List.of(argv).contains("-h") || List.of(argv).contains("--help")) {
      System.out.println(usage());
      return;
    }
    try {
      args = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("jtraced: " + e.getMessage());
      System.err.println(usage());
      System.exit(2);
      return;
    }
    configureLogging(args.logLevel());
    if (args.background()) {
      System.exit(startInBackground(argv, args.logFile()));
      return;
    }
    if (args.relayTo() != null) {
      runRelay(args);
      return;
    }
    ServiceHost host;
    try {
      ServiceHost.Options options = ServiceHost.Options.of(args.producerSockets(), args.consumerSocket())
          .withConsumerSocketMode(args.consumerSocketMode()).withMaxBufferBytes(args.maxBufferBytes())
          .withRelayEndpoints(args.relayEndpoints()).withDefaultClearPeriodMs(args.defaultClearPeriodMs());
      host = ServiceHost.start(options);
      host.giveBackHeapWhenIdle();
    } catch (IOException | RuntimeException e) {
      System.err.println("jtraced: " + e.getMessage());
      System.exit(1);
      return;
    }
    // Serving already: the warm-up only ever runs beside it, below real clients' priority.
    JtracedWarmUp warmUp = JtracedWarmUp.wanted(System.getenv()) ? JtracedWarmUp.start(host::giveBackHeapSoon) : null;
    Runnable stop = () -> {
      if (warmUp != null) {
        warmUp.close();
      }
      host.close();
      System.err.println("jtraced: stopped");
    };
    serveUntilStopped(READY_PREFIX + "producer=" + String.join(",", host.producerSockets())
        + " consumer=" + host.consumerSocket(), stop);
  }

  /**
   * Prints the ready line and serves until SIGTERM or SIGINT, then runs stop and exits 0 the normal
   * way, so that every shutdown hook of the JVM runs too (a JFR recording's dump on exit, an
   * agent's). Any other end of the process (another signal, System.exit elsewhere) still runs stop
   * from a shutdown hook, once.
   */
  private static void serveUntilStopped(String readyLine, Runnable stop) {
    java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
    Runnable once = () -> {
      if (stopped.compareAndSet(false, true)) {
        stop.run();
        System.err.flush();
        System.out.flush();
      }
    };
    Runtime.getRuntime().addShutdownHook(new Thread(once, "jtraced-shutdown"));
    try (StopSignals signals = StopSignals.install(System.err)) {
      System.out.println(readyLine);
      System.out.flush();
      signals.requested().join();
    }
    once.run();
    System.exit(0);
  }

  /** Relay mode: the local producer sockets forwarded to the host, until SIGTERM. */
  private static void runRelay(Args args) {
    ProducerRelay relay;
    try {
      relay = ProducerRelay.start(DefaultSockets.split(args.producerSockets()), args.relayTo(), new PosixClockSource());
    } catch (IOException | RuntimeException e) {
      System.err.println("jtraced: " + e.getMessage());
      System.exit(1);
      return;
    }
    serveUntilStopped(READY_PREFIX + "producer=" + String.join(",", relay.producerSockets())
        + " relaying to " + args.relayTo(), () -> {
          relay.close();
          System.err.println("jtraced: relay stopped");
        });
  }

  static Args parse(String[] argv) {
    return parse(argv, System.getenv(ProducerRelay.RELAY_ENV));
  }

  /** relayEnv: $PERFETTO_RELAY_SOCK_NAME, the host of --relay. */
  static Args parse(String[] argv, String relayEnv) {
    String producer = null;
    boolean relayAll = false;
    Set<String> relayOn = new LinkedHashSet<>();
    boolean relayMode = false;
    String relayTo = null;
    String consumer = null;
    int mode = ServiceHost.DEFAULT_CONSUMER_SOCKET_MODE;
    boolean background = false;
    String logFile = "/tmp/jtraced.log";
    Level level = Level.WARNING;
    long maxBufferBytes = ServiceHost.defaultMaxBufferBytes();
    int clearPeriodMs = ClearPeriod.DEFAULT_MS;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      String value = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        value = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--producer-socket" -> producer = value != null ? value : next(argv, ++i, a);
        case "--consumer-socket" -> consumer = value != null ? value : next(argv, ++i, a);
        case "--consumer-socket-mode" -> mode = parseMode(value != null ? value : next(argv, ++i, a));
        case "--background" -> background = true;
        case "--log-file" -> logFile = value != null ? value : next(argv, ++i, a);
        case "-v", "--verbose" -> level = Level.FINE;
        case "--log-level" -> level = parseLevel(value != null ? value : next(argv, ++i, a));
        case "--max-buffer-memory" -> maxBufferBytes = parseBytes(value != null ? value : next(argv, ++i, a), a);
        case "--default-clear-period" -> clearPeriodMs = parseClearPeriod(value != null ? value : next(argv, ++i, a));
        case "--enable-relay-endpoint" -> relayAll = true;
        case "--enable-relay-endpoint-on" -> relayOn.add(value != null ? value : next(argv, ++i, a));
        case "--relay" -> relayMode = true;
        case "--relay-socket" -> {
          relayMode = true;
          relayTo = value != null ? value : next(argv, ++i, a);
        }
        default -> throw new IllegalArgumentException("unknown argument: " + argv[i]);
      }
    }
    String producers = producer != null ? producer : DefaultSockets.producer();
    if (relayMode && relayTo == null) {
      if (relayEnv == null || relayEnv.isBlank()) {
        throw new IllegalArgumentException("--relay needs the host: --relay-socket ADDR or $"
            + ProducerRelay.RELAY_ENV);
      }
      relayTo = relayEnv.strip();
    }
    if (relayMode && (relayAll || !relayOn.isEmpty())) {
      throw new IllegalArgumentException("--relay forwards producers; --enable-relay-endpoint is for the host");
    }
    List<String> sockets = DefaultSockets.split(producers);
    for (String on : relayOn) {
      if (!sockets.contains(on)) {
        throw new IllegalArgumentException("--enable-relay-endpoint-on " + on + " is not one of the producer sockets "
            + sockets);
      }
    }
    Set<String> relayEndpoints = relayAll ? Set.copyOf(sockets) : Set.copyOf(relayOn);
    return new Args(producers, consumer != null ? consumer : DefaultSockets.consumer(), mode, background,
        logFile, level, maxBufferBytes, relayEndpoints, relayTo, clearPeriodMs);
  }

  private static String next(String[] argv, int i, String flag) {
    if (i >= argv.length) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return argv[i];
  }

  /** A size like 512mb, 4gb or 1048576 (bytes): the units of jperfetto's -b. */
  private static long parseBytes(String s, String flag) {
    try {
      long kb = s.chars().allMatch(Character::isDigit) ? Long.parseLong(s) / 1024 : CommandLineConfig.sizeKb(s);
      if (kb <= 0) {
        throw new IllegalArgumentException(flag + " must be at least 1kb, got " + s);
      }
      return kb * 1024;
    } catch (CommandLineConfig.ConfigException | NumberFormatException e) {
      throw new IllegalArgumentException(flag + " wants a size like 512mb or 4gb, got " + s);
    }
  }

  /** A time like 500ms or 2s (jperfetto's -t units), or 0: off. */
  private static int parseClearPeriod(String s) {
    try {
      long ms = CommandLineConfig.timeMs(s);
      if (ms > Integer.MAX_VALUE || ms > 0 && ms < ServiceLimits.MIN_PERIODIC_TASK_MS) {
        throw new NumberFormatException();
      }
      return (int) ms;
    } catch (CommandLineConfig.ConfigException | NumberFormatException e) {
      throw new IllegalArgumentException("--default-clear-period wants 0 (off) or a time from "
          + ServiceLimits.MIN_PERIODIC_TASK_MS + "ms like 500ms or 2s, got " + s);
    }
  }

  private static int parseMode(String s) {
    try {
      int mode = Integer.parseInt(s, 8);
      if (mode < 0 || mode > 0777) {
        throw new NumberFormatException();
      }
      return mode;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--consumer-socket-mode wants an octal mode like 0660, got " + s);
    }
  }

  private static Level parseLevel(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "error" -> Level.SEVERE;
      case "warning", "warn" -> Level.WARNING;
      case "info" -> Level.INFO;
      case "debug" -> Level.FINE;
      case "trace" -> Level.FINEST;
      default -> throw new IllegalArgumentException("--log-level wants error|warning|info|debug|trace, got " + s);
    };
  }

  static String usage() {
    return """
        usage: jtraced [--producer-socket PATH|HOST:PORT[,...]] [--consumer-socket PATH]
                       [--consumer-socket-mode OCTAL] [--background [--log-file FILE]]
                       [--max-buffer-memory SIZE (default: half the RAM)]
                       [--default-clear-period TIME (default: %dms; 0: off)]
                       [-v | --log-level error|warning|info|debug|trace]
                       [--enable-relay-endpoint | --enable-relay-endpoint-on SOCKET ...]
               jtraced --relay [--relay-socket HOST:PORT] [--producer-socket PATH[,...]]
          HOST:PORT producer sockets are TCP endpoints (no shared memory; anyone who reaches them
          can connect producers). --enable-relay-endpoint serves RelayPort on the producer sockets
          for relays (traced_relay, jtraced --relay). --relay: relay mode, as traced_relay: serve
          local producers and forward them to the host ($PERFETTO_RELAY_SOCK_NAME or --relay-socket).
          --default-clear-period: how often sessions with a ring buffer and no
          incremental_state_config clear their incremental state, so a wrapped ring stays readable."""
        .formatted(ClearPeriod.DEFAULT_MS);
  }

  /** System.Logger goes to java.util.logging by default: one line per record on stderr. */
  private static void configureLogging(Level level) {
    // reset() before anything asks for the root's handlers: the configured ConsoleHandler (and
    // its SimpleFormatter, see JtracedLogHandler) is then never created
    LogManager.getLogManager().reset();
    Logger root = Logger.getLogger("");
    JtracedLogHandler handler = new JtracedLogHandler();
    handler.setLevel(level);
    root.addHandler(handler);
    root.setLevel(level);
  }

  /** Re-executes this command without --background, detached; returns the exit status. */
  private static int startInBackground(String[] argv, String logFile) {
    ProcessHandle.Info info = ProcessHandle.current().info();
    if (info.command().isEmpty() || info.arguments().isEmpty()) {
      System.err.println("jtraced: --background: cannot see this process's command line");
      return 1;
    }
    List<String> cmd = new ArrayList<>();
    if (new File("/usr/bin/setsid").canExecute()) {
      cmd.add("/usr/bin/setsid");
    }
    cmd.add(info.command().get());
    for (String a : info.arguments().get()) {
      if (!a.equals("--background")) {
        cmd.add(a);
      }
    }
    Path log = Path.of(logFile);
    try {
      long start = Files.exists(log) ? Files.size(log) : 0;
      Process child = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectErrorStream(true).start();
      long deadline = System.currentTimeMillis() + BACKGROUND_START_TIMEOUT_MS;
      PrintStream out = System.out;
      while (System.currentTimeMillis() < deadline) {
        String text = Files.readString(log).substring((int) Math.min(start, Files.size(log)));
        int at = text.indexOf(READY_PREFIX);
        if (at >= 0) {
          int end = text.indexOf('\n', at);
          out.println(text.substring(at, end < 0 ? text.length() : end) + " (pid " + child.pid()
              + ", log " + log + ")");
          return 0;
        }
        if (!child.isAlive()) {
          System.err.println("jtraced: the background process exited with " + child.exitValue()
              + "; see " + log + ":\n" + text.strip());
          return 1;
        }
        Thread.sleep(50);
      }
      System.err.println("jtraced: the background process did not get ready in "
          + BACKGROUND_START_TIMEOUT_MS + " ms; see " + log);
      return 1;
    } catch (IOException e) {
      System.err.println("jtraced: --background: " + e.getMessage());
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }
}
