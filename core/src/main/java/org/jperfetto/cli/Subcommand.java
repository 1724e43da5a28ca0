package org.jperfetto.cli;

/**
 * A command run as {@code jperfetto NAME ...} instead of recording (e.g. {@code demo}). Found
 * through {@link java.util.ServiceLoader} or registered with {@link Plugins#register}.
 */
public interface Subcommand {
  /** The first argument that selects it, e.g. "demo". */
  String name();

  /** One line for the usage text. */
  String summary();

  /** Runs with the arguments after the name; returns the exit code. */
  int run(String[] args, CliContext context) throws Exception;
}
