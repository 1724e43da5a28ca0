package org.jperfetto.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChildJvmTest {
  @Test
  void jtracedDaemonFlagsAreTheLaunchersOnes() {
    List<String> flags = ChildJvm.jtracedDaemonFlags();
    // Each line of the launcher's daemon= value, continuation included, becomes flags; no shell left.
    assertTrue(flags.contains("-XX:+UseSerialGC"), flags::toString);
    assertTrue(flags.contains("-XX:TrimNativeHeapInterval=5000"), flags::toString);
    assertTrue(flags.stream().allMatch(f -> f.startsWith("-X") && !f.contains("\\")), flags::toString);
  }

  @Test
  void extraFlagsComeBeforeTheClassPath() {
    List<String> command = ChildJvm.command(List.of("-Xmx64m"), "cp", "Main", "arg");
    assertEquals(List.of("-Xmx64m", "-cp", "cp", "Main", "arg"), command.subList(command.size() - 5, command.size()));
  }
}
