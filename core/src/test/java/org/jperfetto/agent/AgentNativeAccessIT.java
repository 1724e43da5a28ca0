package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.jperfetto.agent.AgentTestApp.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the agent does in a JVM started without {@code --enable-native-access=ALL-UNNAMED}: the JDK's
 * default (warn) lets it run after a line naming the flag; {@code --illegal-native-access=deny}
 * stops the agent with the flag to add, and the application runs on untraced.
 */
@Timeout(60)
class AgentNativeAccessIT {
  @TempDir Path dir;

  private AgentTestApp start(String... flags) throws Exception {
    Path jar = AgentJar.buildFromClassPath(dir.resolve("jperfetto-agent.jar"));
    List<String> jvm = new java.util.ArrayList<>(List.of(flags));
    jvm.add(AgentTraceFixture.agentFlag(jar, "socket=" + dir.resolve("nobody.sock")));
    return AgentTestApp.start(dir, Launch.CLASS_PATH, jvm);
  }

  @Test
  void withoutTheFlagTheAgentRunsAndNamesIt() throws Exception {
    try (AgentTestApp app = start()) {
      assertTrue(app.run() > 0);
      assertEquals(0, app.exit());
      String err = app.stderrText();
      assertTrue(err.contains("native access is not enabled for the agent (start the JVM with "
          + "--enable-native-access=ALL-UNNAMED)"), err);
      assertTrue(err.contains("jperfetto agent started"), err);
    }
  }

  @Test
  void deniedNativeAccessStopsTheAgentNotTheApp() throws Exception {
    try (AgentTestApp app = start("--illegal-native-access=deny")) {
      assertTrue(app.run() > 0, "the app works untraced");
      assertEquals(0, app.exit());
      String err = app.stderrText();
      assertTrue(err.contains("jperfetto agent: not started: this JVM refuses native access to the agent: "
          + "start it with --enable-native-access=ALL-UNNAMED"), err);
      assertFalse(err.contains("jperfetto agent started"), err);
    }
  }
}
