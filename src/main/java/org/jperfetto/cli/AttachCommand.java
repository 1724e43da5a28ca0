package org.jperfetto.cli;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code jperfetto attach PID [--agent JAR] [OPTIONS]}: loads the jperfetto agent into a running
 * JVM through the JDK's Attach API, so it joins system tracing without a restart (OPTIONS are the
 * agent's, as after {@code -javaagent:jperfetto-agent.jar=}). {@code jperfetto attach --list}
 * prints the JVMs this user can attach to.
 *
 * <p>The agent jar is {@code --agent}, else {@code $JPERFETTO_AGENT_JAR}, else
 * {@code lib/jperfetto-agent.jar} of the runtime image, else {@code jperfetto-agent.jar} next to
 * the jar this command runs from.
 */
public final class AttachCommand implements Subcommand {
  static final String NAME = "attach";
  static final String AGENT_JAR = "jperfetto-agent.jar";
  static final String ENV_AGENT_JAR = "JPERFETTO_AGENT_JAR";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "trace a running JVM: attach PID [--agent JAR] [AGENT_OPTIONS]; attach --list";
  }

  @Override
  public int run(String[] args, CliContext ctx) {
    if (args.length == 1 && args[0].equals("--list")) {
      return list(ctx);
    }
    String pid = null;
    String agent = null;
    List<String> options = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--agent") && i + 1 < args.length) {
        agent = args[++i];
      } else if (pid == null && args[i].matches("\\d+")) {
        pid = args[i];
      } else if (!args[i].startsWith("-")) {
        options.add(args[i]);
      } else {
        return usage(ctx, "unknown option " + args[i]);
      }
    }
    if (pid == null) {
      return usage(ctx, "no PID");
    }
    Path jar;
    try {
      jar = agentJar(agent, ctx.env());
    } catch (IOException e) {
      ctx.err().println("jperfetto attach: " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    }
    return attach(pid, jar, String.join(",", options), ctx);
  }

  private static int usage(CliContext ctx, String problem) {
    ctx.err().println("jperfetto attach: " + problem);
    ctx.err().println("usage: jperfetto attach PID [--agent JAR] [KEY=VALUE,...]   or   jperfetto attach --list");
    return Jperfetto.EXIT_ERROR;
  }

  private static int list(CliContext ctx) {
    long self = ProcessHandle.current().pid();
    for (VirtualMachineDescriptor d : VirtualMachine.list()) {
      if (!d.id().equals(Long.toString(self))) {
        ctx.out().println(d.id() + " " + (d.displayName().isEmpty() ? "(no main class)" : d.displayName()));
      }
    }
    return Jperfetto.EXIT_OK;
  }

  private static int attach(String pid, Path jar, String options, CliContext ctx) {
    VirtualMachine vm;
    try {
      vm = VirtualMachine.attach(pid);
    } catch (AttachNotSupportedException | IOException e) {
      ctx.err().println("jperfetto attach: cannot attach to JVM " + pid + ": " + e.getMessage()
          + " (the target must be a HotSpot JVM of the same user, not started with -XX:+DisableAttachMechanism)");
      return Jperfetto.EXIT_ERROR;
    }
    try {
      vm.loadAgent(jar.toString(), options.isEmpty() ? null : options);
      ctx.out().println("jperfetto agent loaded into JVM " + pid + (options.isEmpty() ? "" : " with " + options));
      return Jperfetto.EXIT_OK;
    } catch (AgentInitializationException e) {
      ctx.err().println("jperfetto attach: the agent did not start in JVM " + pid
          + "; its standard error says why (bad options, or native access refused: the target needs "
          + "--enable-native-access=ALL-UNNAMED)");
      return Jperfetto.EXIT_ERROR;
    } catch (AgentLoadException | IOException e) {
      ctx.err().println("jperfetto attach: loading " + jar + " into JVM " + pid + " failed: " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    } finally {
      try {
        vm.detach();
      } catch (IOException e) {
        // the agent is loaded or not already; nothing to undo
      }
    }
  }

  /** The agent jar to load (see the class comment). */
  static Path agentJar(String option, Map<String, String> env) throws IOException {
    List<Path> tried = new ArrayList<>();
    if (option != null) {
      tried.add(Path.of(option));
    } else {
      String fromEnv = env.get(ENV_AGENT_JAR);
      if (fromEnv != null && !fromEnv.isEmpty()) {
        tried.add(Path.of(fromEnv));
      } else {
        tried.add(Path.of(System.getProperty("java.home"), "lib", AGENT_JAR));
        try {
          Path self = Path.of(AttachCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
          tried.add(self.toAbsolutePath().getParent().resolve(AGENT_JAR));
        } catch (URISyntaxException | RuntimeException e) {
          // running from the image: no code source
        }
      }
    }
    for (Path p : tried) {
      if (Files.isRegularFile(p)) {
        return p.toAbsolutePath();
      }
    }
    throw new IOException("no agent jar at " + tried + "; pass --agent PATH (./mvnw package builds target/"
        + AGENT_JAR + ")");
  }
}
