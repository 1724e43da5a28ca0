package org.jperfetto.cli;

import java.io.PrintStream;

/** The {@code jperfetto --help} text. */
final class Usage {
  private Usage() {}

  static void print(PrintStream err) {
    err.print("""

        Usage: jperfetto [OPTIONS] [CATEGORY...]
               jperfetto COMMAND [ARGS]      (see COMMANDS below)

        Record a trace through a Perfetto tracing service (jtraced, or upstream traced).

          -c, --config FILE      TraceConfig file, '-' for stdin (binary protobuf unless --txt)
              --txt              The config is protobuf text format (errors show line:column)
              --txt-lossy        Like --txt, ignoring fields this build does not know
          -o, --out FILE         Where the trace goes, '-' for stdout
              --no-clobber       Fail if the output file exists
              --open             Then show the trace in ui.perfetto.dev (served once from 127.0.0.1)
          -d, --background       Run detached; prints the pid (stop it with kill -TERM PID)
              --system           Use only an external service: never start an in-process one
              --query [--long]   Print the service's producers, data sources and sessions
              --query-raw        Print the same as a TracingServiceState protobuf
              --clone ID         Read a copy of running session ID (see --query) into --out
              --clone-by-name N  The same, by the session's unique_session_name
              --add-attribute KEY[=VALUE]  Add a trace attribute
              --version
          -h, --help

        Without -c, a config is made from:
          -t, --time N[ms|s|m|h]   Duration (default @TIME@)
          -b, --buffer N[kb|mb|gb] Ring buffer size (default @BUFFER@)
          -s, --size N[kb|mb|gb]   Max file size: the service writes the file as it goes
          -a, --app NAME           Android atrace app (passed through to linux.ftrace)
          CATEGORY                 A track_event category to record (e.g. app, gc); none means
                                   all default categories. GROUP/EVENT (sched/sched_switch) is an
                                   ftrace event for a system traced with traced_probes.

        Detached sessions (the config needs write_into_file):
              --detach=KEY         Start the session, detach it under KEY and exit
              --attach=KEY [--stop] Re-attach to it (and stop it); exit code 2 if there is none
              --is_detached=KEY    Exit code 0 if KEY can be re-attached, 2 if not, 1 on error

        Ctrl-C or SIGTERM stops the session cleanly: the trace is still written.
        The consumer socket is $PERFETTO_CONSUMER_SOCK_NAME, else /run/perfetto/traced-consumer.sock
        if /run/perfetto exists, else /tmp/perfetto-consumer. When nothing answers there, jperfetto
        starts an in-process service and says so.
        """.replace("@TIME@", CommandLineConfig.DEFAULT_TIME).replace("@BUFFER@", CommandLineConfig.DEFAULT_BUFFER));
    var commands = Plugins.all(Subcommand.class);
    if (!commands.isEmpty()) {
      err.println("COMMANDS:");
      for (Subcommand c : commands) {
        err.printf("  %-22s %s%n", c.name(), c.summary());
      }
    }
  }
}
