package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.testing.OldJdk;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agent jar on a JDK it cannot run on (older than 22): the JVM starts and runs its program
 * normally, with its own exit status, and the agent says in one line of standard error which JDK
 * it needs and that `jperfetto attach` records the JVM's JFR events without it; no stack trace.
 * JDK 17 is this machine's default java; 11 and 21 are tested where installed (else skipped, saying so).
 */
@Timeout(60)
class AgentOnOldJdkIT {
  @TempDir Path dir;

  @ParameterizedTest(name = "JDK {0}")
  @ValueSource(ints = {11, 17, 21})
  void theJvmRunsNormallyAndTheAgentSaysWhyInOneLine(int feature) throws Exception {
    Path home = OldJdk.home(feature).orElse(null);
    Assumptions.assumeTrue(home != null, () -> OldJdk.missing(feature));
    Path jar = AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
    Process p = new ProcessBuilder(OldJdk.targetCommand(home, List.of("-javaagent:" + jar + "=name=x"), "7", "now"))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    assertTrue(p.waitFor(40, TimeUnit.SECONDS), "the JVM ended");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(7, p.exitValue(), "the program's own exit status; stderr: " + err);
    assertTrue(out.startsWith("ready on " + feature), "the program ran: " + out);
    List<String> lines = err.lines().filter(l -> !l.isBlank()).toList();
    assertEquals(1, lines.size(), "one line on stderr: " + err);
    String line = lines.get(0);
    assertTrue(line.startsWith("jperfetto agent: not started: it needs JDK 22+, this JVM runs " + feature), line);
    assertTrue(line.contains("`jperfetto attach " + p.pid() + "` records this JVM's JFR events without the agent"),
        line);
    assertFalse(err.contains("Exception") || err.contains("\tat ") || err.contains("FATAL"), err);
  }
}
