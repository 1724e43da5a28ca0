package org.jperfetto.tools;

/** One command of {@link Tools}: {@code jperfetto-tools NAME ARGS...}. */
interface Tool {
  /** The first argument that selects it. */
  String name();

  /** Its arguments and what it does, one line of the usage text. */
  String usage();

  /** Runs with the arguments after the name; returns the exit code. */
  int run(String[] args, ToolContext ctx) throws Exception;
}
