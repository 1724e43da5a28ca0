package org.jperfetto.scripts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/burst-rounds.sh's summary (the issue 13 targets, counted over interleaved rounds) from
 * round lines as a run prints them; the runs themselves need upstream binaries, which the repository
 * does not have.
 */
class BurstRoundsScriptTest {
  @TempDir
  Path dir;

  private List<String> summarize(String... lines) throws IOException, InterruptedException {
    Path file = dir.resolve("rounds.txt");
    Files.write(file, List.of(lines));
    Process p = new ProcessBuilder("bash", "scripts/burst-rounds.sh", "--summarize", file.toString())
        .redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "burst-rounds.sh did not exit");
    assertEquals(0, p.exitValue(), out);
    return out.lines().toList();
  }

  @Test
  void countsHowOftenEachTargetHeldOverTheRounds() throws Exception {
    List<String> summary = summarize(
        "# 3 rounds of: traced <- cpp, traced <- java, jtraced <- cpp, jtraced <- java; n=1000000 smb_kb=0",
        "round 1 traced-cpp 1.51 95.0 0.18 1.79 traced-java 1.50 98.3 0.08 1.72"
            + " jtraced-cpp 1.32 99.2 0.17 0.65 jtraced-java 1.46 98.6 0.08 0.51",
        "round 2 traced-cpp 2.36 99.9 0.15 1.40 traced-java 1.43 98.0 0.09 1.31"
            + " jtraced-cpp 1.63 98.9 0.16 0.72 jtraced-java 1.62 98.9 0.08 0.64",
        "round 3 traced-cpp 1.34 100.0 0.20 1.89 traced-java 1.37 98.8 0.08 1.55"
            + " jtraced-cpp 1.19 99.6 0.21 0.64 jtraced-java 1.59 99.6 0.06 0.57");
    assertEquals(List.of(
        "rounds: 3",
        "C++ burst kept, jtraced >= traced: 1 of 3 (jtraced 98.9-99.6 %, traced 95.0-100.0 %)",
        "Java / C++ slices/s into traced: 0.99 0.61 1.02 (>= 0.8 in 2 of 3)",
        "Java / C++ slices/s into jtraced: 1.11 0.99 1.34 (>= 0.8 in 3 of 3)",
        "Java kept >= C++ kept: into traced 1 of 3, into jtraced 2 of 3",
        "ingest CPU s of a C++ burst, jtraced <= traced: 1 of 3 (jtraced 0.16-0.21, traced 0.15-0.20)",
        "read-out CPU s of a C++ burst, jtraced <= traced: 3 of 3 (jtraced 0.64-0.72, traced 1.40-1.89)"),
        summary);
  }

  @Test
  void roundsWithTheReadableShareAlsoCountWhatTraceProcessorReads() throws Exception {
    List<String> summary = summarize(
        "round 1 traced-cpp 2.50 99.1 0.15 1.20 3.0 traced-java 3.10 99.5 0.05 1.30 99.5"
            + " jtraced-cpp 2.40 99.3 0.10 0.40 2.0 jtraced-java 3.50 100.0 0.04 0.40 100.0",
        "round 2 traced-cpp 2.50 99.1 0.15 1.20 4.5 traced-java 3.10 98.5 0.05 1.30 2.5"
            + " jtraced-cpp 2.40 99.0 0.10 0.40 1.0 jtraced-java 3.50 99.9 0.04 0.40 99.9");
    assertTrue(summary.contains("Java kept >= C++ kept: into traced 1 of 2, into jtraced 2 of 2"), summary.toString());
    assertTrue(summary.contains("readable (what trace_processor reads) Java >= C++: into traced 1 of 2"
        + " (Java 2.5-99.5 %, C++ 3.0-4.5 %), into jtraced 2 of 2 (Java 99.9-100.0 %, C++ 1.0-2.0 %)"),
        summary.toString());
    // the CPU figures still come from the same columns
    assertTrue(summary.contains("read-out CPU s of a C++ burst, jtraced <= traced: 2 of 2 (jtraced 0.40-0.40,"
        + " traced 1.20-1.20)"), summary.toString());
  }

  @Test
  void aRunWithoutAResultCountsAsAMiss() throws Exception {
    // burst-bench.sh printed no result line for the C++ SDK: its cell is all zeros
    List<String> summary = summarize("round 1 traced-cpp 0 0 0 0 traced-java 1.50 98.3 0.08 1.72"
        + " jtraced-cpp 1.32 99.2 0.17 0.65 jtraced-java 1.46 98.6 0.08 0.51");
    assertTrue(summary.contains("Java / C++ slices/s into traced: 0.00 (>= 0.8 in 0 of 1)"), summary.toString());
    assertTrue(summary.contains("Java / C++ slices/s into jtraced: 1.11 (>= 0.8 in 1 of 1)"), summary.toString());
  }

  @Test
  void controlRoundsCountHowOftenEachServiceMatchedItselfAndTheOther() throws Exception {
    List<String> summary = summarize(
        "# 6 control rounds of: traced <- cpp, jtraced <- cpp, traced <- cpp, jtraced <- cpp; n=1000000 smb_kb=0",
        control(1, "99.0", "99.5", "99.2", "99.3"),
        control(2, "98.0", "97.0", "99.0", "99.0"),
        control(3, "100.0", "100.0", "99.9", "100.0"),
        control(4, "99.5", "99.0", "99.6", "99.8"),
        control(5, "99.0", "99.9", "99.4", "99.4"),
        control(6, "99.0", "99.0", "99.0", "99.0"),
        "control rounds: 6 (C++ burst kept)"); // a saved run's own summary is not a round
    assertEquals(List.of(
        "control rounds: 6 (C++ burst kept)",
        "traced >= traced earlier in the round: 5 of 6 rounds; in all five of a group of five: 0 of 1 groups",
        "jtraced >= jtraced earlier in the round: 4 of 6 rounds; in all five of a group of five: 0 of 1 groups",
        "jtraced >= traced, first pair of the round: 4 of 6 rounds; in all five of a group of five: 0 of 1 groups",
        "jtraced >= traced, second pair of the round: 6 of 6 rounds; in all five of a group of five: 1 of 1 groups",
        "traced: mean 99.22 %, worst run 98.0 %; jtraced: mean 99.24 %, worst run 97.0 %"),
        summary);
  }

  /** A control round line: the four cells' % kept, the other numbers fixed. */
  private static String control(int round, String traced, String jtraced, String traced2, String jtraced2) {
    return "control " + round + " traced-cpp 2.0 " + traced + " 0.15 1.2 1.0 jtraced-cpp 2.0 " + jtraced
        + " 0.10 0.4 1.0 traced-cpp2 2.0 " + traced2 + " 0.15 1.2 1.0 jtraced-cpp2 2.0 " + jtraced2
        + " 0.10 0.4 1.0";
  }

  @Test
  void noRoundLinesIsAnError() throws Exception {
    Path file = dir.resolve("empty.txt");
    Files.writeString(file, "# nothing ran\n");
    Process p = new ProcessBuilder("bash", "scripts/burst-rounds.sh", "--summarize", file.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertNotEquals(0, p.exitValue());
    assertTrue(out.contains("no round lines"), out);
  }
}
