package org.jperfetto.cli;

import java.io.PrintStream;

/**
 * The flags of {@code jperfetto demo}: {@code -o/--out FILE}, {@code -t/--time N[ms|s|m|h]},
 * {@code --system}, {@code --producer}, {@code -h/--help}. Long flags also take {@code --flag=value}.
 *
 * @param out where the trace goes
 * @param timeMs how long to record (or, with --producer, to run the workload)
 * @param system use only an external service
 * @param producerOnly run only the workload, as a producer
 * @param help print the usage
 */
record DemoOptions(String out, long timeMs, boolean system, boolean producerOnly, boolean help) {
  /** Longest demo: the session's duration_ms is a uint32, and a demo is meant to be short anyway. */
  static final long MAX_TIME_MS = 3_600_000;

  /** A command line the demo does not accept. */
  static final class UsageException extends Exception {
    UsageException(String message) {
      super(message);
    }
  }

  static DemoOptions parse(String[] args) throws UsageException {
    String out = null;
    String time = Demo.DEFAULT_TIME;
    boolean system = false;
    boolean producer = false;
    boolean help = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String inline = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        inline = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      switch (arg) {
        case "-o", "--out" -> out = inline != null ? inline : value(args, ++i, arg);
        case "-t", "--time" -> time = inline != null ? inline : value(args, ++i, arg);
        case "--system" -> system = true;
        case "--producer" -> producer = true;
        case "-h", "--help" -> help = true;
        default -> throw new UsageException("unknown argument: " + args[i]);
      }
    }
    long timeMs;
    try {
      timeMs = CommandLineConfig.timeMs(time);
    } catch (CommandLineConfig.ConfigException e) {
      throw new UsageException(e.getMessage());
    }
    if (timeMs <= 0 || timeMs > MAX_TIME_MS) {
      throw new UsageException("--time must be between 1ms and 1h: " + time);
    }
    if (producer && out != null) {
      throw new UsageException("--producer runs only the workload: a session elsewhere records it, so -o does "
          + "not apply");
    }
    if (producer && system) {
      throw new UsageException("--producer always uses the system producer socket: drop --system");
    }
    return new DemoOptions(out != null ? out : Demo.DEFAULT_OUT, timeMs, system, producer, help);
  }

  private static String value(String[] args, int i, String flag) throws UsageException {
    if (i >= args.length) {
      throw new UsageException(flag + " needs a value");
    }
    return args[i];
  }

  static void usage(PrintStream err) {
    err.print("""

        Usage: jperfetto demo [-o FILE] [-t TIME] [--system]
               jperfetto demo --producer [-t TIME]

        Records a multi-threaded Java workload instrumented with the TrackEvent API (slices,
        counters, flows, debug annotations) into a trace for https://ui.perfetto.dev.

          -o, --out FILE     Where the trace goes (default demo.perfetto-trace)
          -t, --time N[ms|s|m|h]  How long to record (default 5s)
              --system       Use only an external service: never start an in-process one
              --producer     Run only the workload, as a producer on the system producer socket
                             ($PERFETTO_PRODUCER_SOCK_NAME, else /run/perfetto or /tmp), for TIME:
                             a session started by anyone (jperfetto, perfetto) records it
          -h, --help
        """);
  }
}
