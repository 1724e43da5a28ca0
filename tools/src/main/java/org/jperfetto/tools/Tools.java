package org.jperfetto.tools;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * {@code jperfetto-tools NAME ARGS...} (scripts/jperfetto-tools): the benchmark and build helpers
 * that users never get. They are not in the jperfetto jar or the runtime image: they run on the
 * image's java with this module's jar on the class path, against the product's exported API only.
 */
public final class Tools {
  static final int EXIT_OK = 0;
  static final int EXIT_ERROR = 1;
  static final List<Tool> ALL = List.of(new RefProducer(), new AotTraining(), new GapsReport());

  private Tools() {}

  public static void main(String[] args) {
    int code = run(args, ToolContext.system());
    System.out.flush();
    System.exit(code);
  }

  /** Runs one command line; returns the exit code. */
  static int run(String[] args, ToolContext ctx) {
    if (args.length > 0) {
      for (Tool tool : ALL) {
        if (tool.name().equals(args[0])) {
          try {
            return tool.run(Arrays.copyOfRange(args, 1, args.length), ctx);
          } catch (Exception e) {
            ctx.err().println("jperfetto-tools " + args[0] + ": " + e);
            return EXIT_ERROR;
          }
        }
      }
    }
    usage(ctx.err());
    return EXIT_ERROR;
  }

  static void usage(PrintStream err) {
    err.println("Usage: jperfetto-tools TOOL ARGS...  (benchmark and build helpers, not part of jperfetto)");
    for (Tool tool : ALL) {
      err.printf("  %-14s %s%n", tool.name(), tool.usage());
    }
  }
}
