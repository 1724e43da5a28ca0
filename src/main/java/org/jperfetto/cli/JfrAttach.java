package org.jperfetto.cli;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnectionNotification;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.jperfetto.agent.AgentOptions;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.jfr.JfrDataSource;
import org.jperfetto.producer.jfr.RemoteJfr;

/**
 * {@code jperfetto attach PID} in JFR mode: this process becomes the producer of another JVM's
 * {@code jvm.jfr}, driving that JVM's Flight Recorder over JMX (nothing of jperfetto is loaded
 * into it). The Attach API starts the JVM's local JMX connector; each session that enables
 * {@code jvm.jfr} gets a recording in the JVM for as long as it runs (see {@link RemoteJfr}).
 *
 * <p>It runs in the foreground until Ctrl-C or SIGTERM, the target's exit, a lost connection, or
 * {@code jperfetto attach --detach PID} (which finds this process through {@link AttachPidFile});
 * then it stops every recording it made in the target, closes them (JFR removes their files from
 * the target's repository) and exits 0.
 */
final class JfrAttach {
  /**
   * Set to true, reads the target's recordings in chunks (as for JDK 11-15) even where its
   * FlightRecorderMXBean streams: for tests, or a target whose streaming misbehaves.
   */
  static final String CHUNKS_PROPERTY = "jperfetto.attach.chunks";
  /** Longest the instances' stops may take at detach before their recordings are closed anyway. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

  private JfrAttach() {}

  static int run(TargetJvm target, AgentOptions options, CliContext ctx) {
    if (!options.methods().isEmpty()) {
      ctx.err().println("jperfetto attach: methods= needs the agent (--mode agent, JDK "
          + TargetJvm.AGENT_FEATURE + "+ in the target)");
      return Jperfetto.EXIT_ERROR;
    }
    if (!options.jfr()) {
      ctx.err().println("jperfetto attach: jfr=off leaves JFR mode nothing to record");
      return Jperfetto.EXIT_ERROR;
    }
    long pid = target.pid();
    JMXConnector jmx;
    try {
      jmx = connect(pid);
    } catch (IOException | AttachNotSupportedException e) {
      ctx.err().println("jperfetto attach: cannot reach the Flight Recorder of JVM " + pid + ": " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    }
    AttachPidFile pidFile = AttachPidFile.of(pid, ctx.env());
    try (StopSignals signals = StopSignals.install(ctx.err())) {
      MBeanServerConnection connection = jmx.getMBeanServerConnection();
      if (!RemoteJfr.isAvailable(connection)) {
        ctx.err().println("jperfetto attach: JVM " + pid + " has no FlightRecorderMXBean (no jdk.management.jfr)");
        return Jperfetto.EXIT_ERROR;
      }
      boolean streams = target.feature() >= TargetJvm.STREAMING_FEATURE && !Boolean.getBoolean(CHUNKS_PROPERTY);
      RemoteJfr jfr = new RemoteJfr((int) pid, connection, streams);
      // Initializes the target's Flight Recorder now (seconds on a busy machine), not when the
      // first session starts and would miss its first moments.
      jfr.eventTypes();
      CompletableFuture<String> end = new CompletableFuture<>();
      jmx.addConnectionNotificationListener((n, hb) -> {
        String type = n.getType();
        if (type.equals(JMXConnectionNotification.FAILED) || type.equals(JMXConnectionNotification.CLOSED)) {
          end.complete("the connection to it was lost");
        }
      }, null, null);
      signals.requested().thenAccept(sig -> end.complete(sig));
      ProcessHandle.of(pid).ifPresentOrElse(h -> h.onExit().thenRun(() -> end.complete("it exited")),
          () -> end.complete("it exited"));
      String name = options.name().equals(AgentOptions.DEFAULT_NAME) ? "jperfetto.attach." + pid : options.name();
      TracingProducer.Builder b = TracingProducer.builder(name)
          .dataSource(JfrDataSource.create(options.jfrConfig(), jfr));
      if (options.socket() != null) {
        b.socketPath(options.socket());
      }
      if (options.smbKb() > 0) {
        b.smbSizeHint(options.smbKb() * 1024);
      }
      TracingProducer producer = b.start();
      pidFile.write();
      ctx.out().println("jperfetto attach: JFR mode" + (streams ? "" : " (chunks)") + " for JVM " + pid + " ("
          + describe(target) + "): producer "
          + name + " on " + producer.socketPath() + " offers jvm.jfr; stop with Ctrl-C or `jperfetto attach --detach "
          + pid + "`");
      ctx.out().flush();
      String why = end.join();
      producer.close(); // stops the running instances: their recordings in the target end
      int forced = jfr.closeAll(STOP_TIMEOUT);
      ctx.out().println("jperfetto attach: detached from JVM " + pid + " (" + why + ")"
          + (forced > 0 ? "; " + forced + " recording(s) closed before their stop finished" : ""));
      return Jperfetto.EXIT_OK;
    } catch (IOException e) {
      ctx.err().println("jperfetto attach: JVM " + pid + ": " + e.getMessage());
      return Jperfetto.EXIT_ERROR;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Jperfetto.EXIT_ERROR;
    } finally {
      pidFile.remove();
      try {
        jmx.close();
      } catch (IOException e) {
        // the target is gone
      }
    }
  }

  private static String describe(TargetJvm t) {
    return (t.mainClass().isEmpty() ? "" : t.mainClass() + ", ") + "JDK " + t.javaVersion();
  }

  /** The target's local JMX connector (started through the Attach API if it is not running). */
  private static JMXConnector connect(long pid) throws IOException, AttachNotSupportedException {
    VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
    String address;
    try {
      address = vm.startLocalManagementAgent();
    } finally {
      vm.detach();
    }
    return JMXConnectorFactory.connect(new JMXServiceURL(address));
  }

  /**
   * {@code jperfetto attach --detach PID}: asks the jperfetto process attached to PID to end
   * (SIGTERM) and waits for it.
   */
  static int detach(long target, CliContext ctx) {
    AttachPidFile pidFile = AttachPidFile.of(target, ctx.env());
    var attached = pidFile.read();
    var handle = attached.isPresent() ? ProcessHandle.of(attached.getAsLong())
        : java.util.Optional.<ProcessHandle>empty();
    if (handle.isEmpty() || !handle.get().isAlive()) {
      ctx.err().println("jperfetto attach: nothing is attached to JVM " + target + " in JFR mode (no live process in "
          + pidFile.path() + "); an agent loaded with --mode agent stays until the JVM exits");
      return Jperfetto.EXIT_ERROR;
    }
    ProcessHandle h = handle.get();
    h.destroy(); // SIGTERM: it stops its recordings in the target and exits
    try {
      h.onExit().get(STOP_TIMEOUT.toSeconds() + 5, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      ctx.err().println("jperfetto attach: process " + h.pid() + " attached to JVM " + target + " did not end");
      return Jperfetto.EXIT_ERROR;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Jperfetto.EXIT_ERROR;
    }
    ctx.out().println("jperfetto attach: detached from JVM " + target + " (process " + h.pid() + " ended)");
    return Jperfetto.EXIT_OK;
  }
}
