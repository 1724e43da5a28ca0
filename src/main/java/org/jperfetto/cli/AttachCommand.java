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
import org.jperfetto.agent.AgentOptions;
import org.jperfetto.agent.boot.AgentBoot;

/**
 * {@code jperfetto attach PID [--mode agent|jfr] [--agent JAR] [--background] [OPTIONS]}: traces a
 * running JVM without a restart. Two modes:
 * <ul>
 *   <li>{@code agent} (the default for JDK 22+): loads the jperfetto agent into the JVM through the
 *       Attach API (OPTIONS are the agent's, as after {@code -javaagent:jperfetto-agent.jar=}); this
 *       command then returns, the agent stays until the JVM exits.
 *   <li>{@code jfr} (the default for JDK 11 to 21, and for a JVM that refuses dynamic agents): this
 *       process drives the JVM's Flight Recorder from outside and offers its events as
 *       {@code jvm.jfr} ({@link JfrAttach}), in the foreground until Ctrl-C, SIGTERM, the JVM's
 *       exit or {@code jperfetto attach --detach PID}; {@code --background} runs it detached.
 * </ul>
 * {@code jperfetto attach --list} prints the JVMs this user can attach to, with their JDK and mode.
 *
 * <p>The agent jar is {@code --agent}, else {@code $JPERFETTO_AGENT_JAR}, else
 * {@code lib/jperfetto-agent.jar} of the runtime image, else {@code jperfetto-agent.jar} next to
 * the jar this command runs from.
 */
public final class AttachCommand implements Subcommand {
  static final String NAME = "attach";
  static final String AGENT_JAR = "jperfetto-agent.jar";
  static final String ENV_AGENT_JAR = "JPERFETTO_AGENT_JAR";
  private static final String USAGE = "usage: jperfetto attach PID [--mode agent|jfr] [--agent JAR] [--background]"
      + " [KEY=VALUE,...]   or   jperfetto attach --list   or   jperfetto attach --detach PID";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "trace a running JVM: attach PID [--mode agent|jfr] [--agent JAR] [--background] [OPTIONS];"
        + " attach --list; attach --detach PID";
  }

  @Override
  public int run(String[] args, CliContext ctx) {
    if (args.length == 1 && args[0].equals("--list")) {
      return list(ctx);
    }
    if (args.length == 2 && args[0].equals("--detach") && args[1].matches("\\d+")) {
      return JfrAttach.detach(Long.parseLong(args[1]), ctx);
    }
    String pid = null;
    String agent = null;
    TargetJvm.Mode mode = null;
    boolean background = false;
    List<String> options = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--agent") && i + 1 < args.length) {
        agent = args[++i];
      } else if (args[i].equals("--mode") && i + 1 < args.length) {
        try {
          mode = TargetJvm.Mode.of(args[++i]);
        } catch (IllegalArgumentException e) {
          return usage(ctx, e.getMessage());
        }
      } else if (args[i].equals("--background")) {
        background = true;
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
    String optionText = String.join(",", options);
    AgentOptions parsed;
    try {
      parsed = AgentOptions.parse(optionText);
    } catch (IllegalArgumentException e) {
      ctx.err().println("jperfetto attach: " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    }
    if (agent != null && mode == null) {
      mode = TargetJvm.Mode.AGENT; // a jar to load means the agent
    }
    Path jar = null;
    if (mode == TargetJvm.Mode.AGENT) {
      try {
        jar = agentJar(agent, ctx.env());
      } catch (IOException e) {
        ctx.err().println("jperfetto attach: " + e.getMessage());
        return Jperfetto.EXIT_ERROR;
      }
    }
    TargetJvm target;
    try {
      target = TargetJvm.inspect(Long.parseLong(pid));
    } catch (AttachNotSupportedException | IOException e) {
      ctx.err().println("jperfetto attach: cannot attach to JVM " + pid + ": " + e.getMessage()
          + " (the target must be a HotSpot JVM of the same user, not started with -XX:+DisableAttachMechanism)");
      return Jperfetto.EXIT_ERROR;
    }
    TargetJvm.Mode chosen = mode != null ? mode : target.defaultMode();
    String refusal = target.refusal(chosen != null ? chosen : TargetJvm.Mode.JFR);
    if (refusal != null) {
      ctx.err().println("jperfetto attach: " + refusal);
      return Jperfetto.EXIT_ERROR;
    }
    if (chosen == TargetJvm.Mode.JFR) {
      if (background) {
        return relaunch(args, target, ctx);
      }
      return JfrAttach.run(target, parsed, ctx);
    }
    if (background) {
      return usage(ctx, "--background is for JFR mode (an agent stays in the JVM by itself)");
    }
    if (jar == null) {
      try {
        jar = agentJar(agent, ctx.env());
      } catch (IOException e) {
        ctx.err().println("jperfetto attach: " + e.getMessage());
        return Jperfetto.EXIT_ERROR;
      }
    }
    return loadAgent(target, jar, optionText, ctx);
  }

  private static int usage(CliContext ctx, String problem) {
    ctx.err().println("jperfetto attach: " + problem);
    ctx.err().println(USAGE);
    return Jperfetto.EXIT_ERROR;
  }

  /** JFR mode in a detached copy of this command; prints its pid. */
  private static int relaunch(String[] args, TargetJvm target, CliContext ctx) {
    List<String> all = new ArrayList<>();
    all.add(NAME);
    all.addAll(List.of(args));
    try {
      long child = Background.relaunch(all);
      ctx.out().println("jperfetto attach: JFR mode for JVM " + target.pid() + " in the background (process " + child
          + "); stop it with `jperfetto attach --detach " + target.pid() + "`");
      return Jperfetto.EXIT_OK;
    } catch (IOException e) {
      ctx.err().println("jperfetto attach: cannot start in the background: " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    }
  }

  /** The attachable JVMs as a table: pid, main class, JDK, the mode attach would use. */
  private static int list(CliContext ctx) {
    long self = ProcessHandle.current().pid();
    String format = "%-8s %-40s %-12s %s%n";
    ctx.out().printf(format, "PID", "MAIN CLASS", "JDK", "MODE");
    for (VirtualMachineDescriptor d : VirtualMachine.list()) {
      if (d.id().equals(Long.toString(self)) || !d.id().matches("\\d+")) {
        continue;
      }
      String main = TargetJvm.mainOf(d.displayName());
      String jdk = "?";
      String mode;
      try {
        TargetJvm t = TargetJvm.inspect(Long.parseLong(d.id()));
        main = t.mainClass();
        jdk = t.javaVersion();
        TargetJvm.Mode m = t.defaultMode();
        mode = m != null ? m.word() : "none (JDK " + TargetJvm.JFR_FEATURE + "+ needed)";
      } catch (AttachNotSupportedException | IOException e) {
        mode = "none (cannot attach: " + e.getMessage() + ")";
      }
      ctx.out().printf(format, d.id(), main.isEmpty() ? "(no main class)" : main, jdk, mode);
    }
    return Jperfetto.EXIT_OK;
  }

  private static int loadAgent(TargetJvm target, Path jar, String options, CliContext ctx) {
    String pid = Long.toString(target.pid());
    VirtualMachine vm;
    try {
      vm = VirtualMachine.attach(pid);
    } catch (AttachNotSupportedException | IOException e) {
      ctx.err().println("jperfetto attach: cannot attach to JVM " + pid + ": " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    }
    try {
      vm.loadAgent(jar.toString(), options.isEmpty() ? null : options);
      String status = vm.getSystemProperties().getProperty(AgentBoot.STATUS, "");
      if (!status.equals("started")) {
        ctx.err().println("jperfetto attach: the agent did not start in JVM " + pid + ": "
            + (status.startsWith("failed: ") ? status.substring("failed: ".length()) : "it reported nothing"));
        return Jperfetto.EXIT_ERROR;
      }
      ctx.out().println("jperfetto agent loaded into JVM " + pid + (options.isEmpty() ? "" : " with " + options));
      return Jperfetto.EXIT_OK;
    } catch (AgentInitializationException e) {
      ctx.err().println("jperfetto attach: the agent did not start in JVM " + pid + ": " + e.getMessage()
          + " (an agent jar of another jperfetto release?); its standard error says why");
      return Jperfetto.EXIT_ERROR;
    } catch (AgentLoadException | IOException e) {
      ctx.err().println("jperfetto attach: loading " + jar + " into JVM " + pid + " failed: " + e.getMessage()
          + (target.feature() >= 21 ? " (a JVM started with -XX:-EnableDynamicAgentLoading refuses agents: `jperfetto"
              + " attach " + pid + " --mode jfr` needs none)" : ""));
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
