package org.jperfetto.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;

/**
 * What a command reads and writes: the standard streams, the environment, and whether stderr is
 * a terminal (the live status line shows only then). Tests pass their own.
 *
 * @param in standard input (for {@code -c -})
 * @param out standard output (for {@code -o -}, {@code --query})
 * @param err messages and the status line
 * @param env environment variables (PERFETTO_CONSUMER_SOCK_NAME, ...)
 * @param terminal true when a person watches: show the live status line
 */
public record CliContext(InputStream in, PrintStream out, PrintStream err, Map<String, String> env,
    boolean terminal) {
  /** The process's own streams and environment. */
  public static CliContext system() {
    java.io.Console console = System.console();
    return new CliContext(System.in, System.out, System.err, System.getenv(),
        console != null && console.isTerminal());
  }
}
