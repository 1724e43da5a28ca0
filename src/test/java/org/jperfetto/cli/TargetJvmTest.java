package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How attach reads a JVM's JDK and main class, and which mode it picks for it. */
class TargetJvmTest {
  static TargetJvm jvm(int feature, boolean agentsRefused) {
    return new TargetJvm(42, "com.shop.Main", feature + ".0.1", feature, agentsRefused);
  }

  @Test
  void theAgentFromJdk22AndJfrModeFrom11() {
    assertEquals(TargetJvm.Mode.AGENT, jvm(22, false).defaultMode());
    assertEquals(TargetJvm.Mode.AGENT, jvm(25, false).defaultMode());
    assertEquals(TargetJvm.Mode.JFR, jvm(25, true).defaultMode(), "dynamic agents refused");
    assertEquals(TargetJvm.Mode.JFR, jvm(21, false).defaultMode());
    assertEquals(TargetJvm.Mode.JFR, jvm(17, false).defaultMode());
    assertEquals(TargetJvm.Mode.JFR, jvm(11, false).defaultMode());
    assertNull(jvm(8, false).defaultMode());
  }

  @Test
  void refusalsNameTheJdkAndWhatToUseInstead() {
    String agentOn17 = jvm(17, false).refusal(TargetJvm.Mode.AGENT);
    assertTrue(agentOn17.contains("runs JDK 17.0.1 and the agent needs JDK 22+")
        && agentOn17.contains("`jperfetto attach 42 --mode jfr`"), agentOn17);
    String refused = jvm(25, true).refusal(TargetJvm.Mode.AGENT);
    assertTrue(refused.contains("-XX:-EnableDynamicAgentLoading") && refused.contains("--mode jfr"), refused);
    String jfrOn8 = jvm(8, false).refusal(TargetJvm.Mode.JFR);
    assertTrue(jfrOn8.contains("needs JDK 11+"), jfrOn8);
    assertNull(jvm(25, false).refusal(TargetJvm.Mode.AGENT));
    assertNull(jvm(11, false).refusal(TargetJvm.Mode.JFR));
  }

  @Test
  void featureAndMainClassAsTheJvmReportsThem() {
    assertEquals(8, TargetJvm.feature("1.8"));
    assertEquals(17, TargetJvm.feature("17"));
    assertEquals(0, TargetJvm.feature(null));
    assertEquals(0, TargetJvm.feature("x"));
    assertEquals("com.shop.Main", TargetJvm.mainOf("com.shop.Main --port 80"));
    assertEquals("shop.jar", TargetJvm.mainOf("shop.jar"));
    assertEquals("Prog.java", TargetJvm.mainOf("jdk.compiler/com.sun.tools.javac.launcher.Main /src/Prog.java 3"));
    assertEquals("", TargetJvm.mainOf(""));
  }
}
