package org.jperfetto.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --background} without fork(2): start this same command again, without the flag, as a
 * detached process (its own session via setsid(1) when available, standard streams on
 * /dev/null), print its pid and return. The command line comes from the system property
 * {@code jperfetto.launcher} (the jlink launcher sets it) or from this JVM's own command line
 * (/proc/self/cmdline via ProcessHandle). Stop the background run with {@code kill -TERM PID}:
 * it still writes a valid trace.
 */
final class Background {
  static final String LAUNCHER_PROPERTY = "jperfetto.launcher";
  private static final Path SETSID = Path.of("/usr/bin/setsid");

  private Background() {}

  /** Starts the detached copy; returns its pid. */
  static long relaunch(List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    if (Files.isExecutable(SETSID)) {
      command.add(SETSID.toString());
    }
    command.addAll(selfCommand(args.size()));
    for (String a : args) {
      if (!a.equals("--background") && !a.equals("-d")) {
        command.add(a);
      }
    }
    Process p = new ProcessBuilder(command)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    return p.pid();
  }

  /** The command that started this program, without its {@code argCount} program arguments. */
  private static List<String> selfCommand(int argCount) throws IOException {
    String launcher = System.getProperty(LAUNCHER_PROPERTY);
    if (launcher != null && !launcher.isEmpty()) {
      return List.of(launcher);
    }
    ProcessHandle.Info info = ProcessHandle.current().info();
    String exe = info.command().orElseThrow(() -> new IOException("cannot find this JVM's command"));
    String[] all = info.arguments().orElseThrow(() -> new IOException("cannot find this JVM's arguments"));
    if (all.length < argCount) {
      throw new IOException("cannot tell this JVM's options from jperfetto's arguments");
    }
    List<String> out = new ArrayList<>();
    out.add(exe);
    out.addAll(List.of(all).subList(0, all.length - argCount));
    return out;
  }
}
