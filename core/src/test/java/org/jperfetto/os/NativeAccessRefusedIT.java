package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A JVM that refuses native access (--illegal-native-access=deny, no --enable-native-access) is
 * told which flag jperfetto needs, once, in our words, when the first downcall is linked.
 */
class NativeAccessRefusedIT {
  /** The child: two different downcalls, each failing; prints what each failure says. */
  public static final class Child {
    public static void main(String[] args) {
      try {
        Fds.close(-1);
      } catch (Throwable t) {
        System.out.println("close: " + causes(t));
      }
      try {
        Clocks.nanos(Clocks.CLOCK_MONOTONIC);
      } catch (Throwable t) {
        System.out.println("clock: " + causes(t));
      }
    }

    private static String causes(Throwable t) {
      StringBuilder s = new StringBuilder();
      for (Throwable c = t; c != null; c = c.getCause()) {
        s.append(c.getClass().getSimpleName()).append('[').append(c.getMessage()).append("] ");
      }
      return s.toString();
    }
  }

  @Test
  void refusedNativeAccessNamesTheFlagOnce() throws IOException, InterruptedException {
    assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24 on");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("--illegal-native-access=deny");
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Child.class.getName()));
    Process p = new ProcessBuilder(command).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not end");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    String said = "jperfetto needs native access (the FFM API) and this JVM refuses it: start the JVM with "
        + "--enable-native-access=ALL-UNNAMED";
    assertTrue(out.contains("close: ExceptionInInitializerError") && out.contains("IllegalCallerException[" + said),
        out);
    assertTrue(out.contains("clock: ExceptionInInitializerError[null] IllegalCallerException[" + said), out);
    assertEquals(1, err.split(java.util.regex.Pattern.quote(said), -1).length - 1, "logged once: " + err);
  }
}
