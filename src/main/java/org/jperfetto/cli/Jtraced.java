package org.jperfetto.cli;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.ipc.DefaultSockets;

/**
 * The {@code jtraced} daemon: the tracing service on its producer and consumer sockets.
 *
 * <pre>
 * jtraced [--producer-socket PATH[,PATH...]] [--consumer-socket PATH]
 *         [--consumer-socket-mode OCTAL] [--background [--log-file FILE]] [-v | --log-level LEVEL]
 *         [--max-buffer-memory SIZE]
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
 * <p>--background: a JVM cannot fork, so jtraced starts itself again (same java, same JVM and
 * program arguments minus --background) under setsid when available, with stdin from /dev/null and
 * stdout/stderr appended to the log file (default /tmp/jtraced.log); the first process waits until
 * the second printed its ready line (or failed), prints the child's pid and exits.
 */
public final class Jtraced {
  static final String READY_PREFIX = "jtraced: listening on ";
  private static final long BACKGROUND_START_TIMEOUT_MS = 20_000;

  private Jtraced() {}

  record Args(String producerSockets, String consumerSocket, int consumerSocketMode,
      boolean background, String logFile, Level logLevel, long maxBufferBytes) {}

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
    ServiceHost host;
    try {
      host = ServiceHost.start(ServiceHost.Options.of(args.producerSockets(), args.consumerSocket())
          .withConsumerSocketMode(args.consumerSocketMode()).withMaxBufferBytes(args.maxBufferBytes()));
    } catch (IOException | RuntimeException e) {
      System.err.println("jtraced: " + e.getMessage());
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      host.close();
      System.err.println("jtraced: stopped");
      System.err.flush();
      System.out.flush();
      Runtime.getRuntime().halt(0); // a signal-initiated exit would otherwise report 128+signal
    }, "jtraced-shutdown"));
    System.out.println(READY_PREFIX + "producer=" + String.join(",", host.producerSockets())
        + " consumer=" + host.consumerSocket());
    System.out.flush();
    if (!"0".equals(System.getenv(WARMUP_ENV))) {
      host.warmUpJit();
    }
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** JPERFETTO_WARMUP=0 leaves out the JIT warm-up (to measure without it). */
  static final String WARMUP_ENV = "JPERFETTO_WARMUP";

  static Args parse(String[] argv) {
    String producer = null;
    String consumer = null;
    int mode = ServiceHost.DEFAULT_CONSUMER_SOCKET_MODE;
    boolean background = false;
    String logFile = "/tmp/jtraced.log";
    Level level = Level.WARNING;
    long maxBufferBytes = ServiceHost.defaultMaxBufferBytes();
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
        default -> throw new IllegalArgumentException("unknown argument: " + argv[i]);
      }
    }
    return new Args(producer != null ? producer : DefaultSockets.producer(),
        consumer != null ? consumer : DefaultSockets.consumer(), mode, background, logFile, level,
        maxBufferBytes);
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
      long kb = s.chars().allMatch(Character::isDigit) ? Long.parseLong(s) / 1024 : TraceConfigs.sizeKb(s);
      if (kb <= 0) {
        throw new IllegalArgumentException(flag + " must be at least 1kb, got " + s);
      }
      return kb * 1024;
    } catch (TraceConfigs.ConfigException | NumberFormatException e) {
      throw new IllegalArgumentException(flag + " wants a size like 512mb or 4gb, got " + s);
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
        usage: jtraced [--producer-socket PATH[,PATH...]] [--consumer-socket PATH]
                       [--consumer-socket-mode OCTAL] [--background [--log-file FILE]]
                       [--max-buffer-memory SIZE (default: half the RAM)]
                       [-v | --log-level error|warning|info|debug|trace]""";
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
