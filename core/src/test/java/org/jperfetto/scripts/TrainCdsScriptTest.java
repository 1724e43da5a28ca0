package org.jperfetto.scripts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/train-cds.sh's plumbing, with stand-in launchers that log how they were called and write
 * the archive their JPERFETTO_JAVA_OPTS name: the server first, then each client of the list (split
 * at a lone --) with its own arguments and its own archive, in the image or where -a says (the
 * image's build trains jtraced with the tools' client and jperfetto's demo so: scripts/train-image.sh).
 */
class TrainCdsScriptTest {
  /** A stand-in launcher: logs "NAME OPTS | ARG | ARG ...", writes the archive -XX:AOTCacheOutput names. */
  private static final String LAUNCHER = """
      #!/bin/sh
      line="$(basename "$0") $JPERFETTO_JAVA_OPTS"
      for a in "$@"; do line="$line | $a"; done
      echo "$line" >> "$TRAIN_LOG"
      out=${JPERFETTO_JAVA_OPTS#-XX:AOTCacheOutput=}
      [ "$(basename "$0")" = failing ] && exit 3
      if [ "$(basename "$0")" = jtraced ]; then
        exec python3 -c 'import os, signal, socket, sys
      s = socket.socket(socket.AF_UNIX); s.bind(os.environ["PERFETTO_CONSUMER_SOCK_NAME"]); s.listen()
      signal.signal(signal.SIGTERM, lambda *a: (open(sys.argv[1], "w").close(), sys.exit(0)))
      while True: signal.pause()' "$out"
      fi
      : > "$out"
      """;

  @TempDir Path dir;
  Path image;
  Path log;

  @BeforeEach
  void fakeImage() throws IOException {
    image = dir.resolve("image");
    Files.createDirectories(image.resolve("bin"));
    Files.createDirectories(image.resolve("lib"));
    Files.writeString(image.resolve("release"), "JAVA_VERSION=\"25.0.3\"\n");
    for (Path launcher : List.of(image.resolve("bin/jtraced"), image.resolve("bin/jperfetto"), dir.resolve("tool"),
        image.resolve("bin/failing"))) {
      Files.writeString(launcher, LAUNCHER);
      assertTrue(launcher.toFile().setExecutable(true));
    }
    log = dir.resolve("train.log");
  }

  private String train(String... clients) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("sh", "scripts/train-cds.sh", image.toString(), "jtraced --flag"));
    cmd.addAll(List.of(clients));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("TRAIN_LOG", log.toString());
    Process p = pb.start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "train-cds.sh did not exit");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  @Test
  void eachClientRunsWithItsOwnArgumentsAndRecordsItsOwnArchive() throws Exception {
    Path tools = dir.resolve("tools-cache");
    String out = train("-a", tools.toString(), dir.resolve("tool").toString(), "aot-training", "a config.pbtxt",
        "--", "jperfetto", "demo", "--system", "-t", "2s", "-o", "/dev/null");
    assertEquals(List.of(
        "jtraced -XX:AOTCacheOutput=" + image + "/lib/jtraced.aot | --flag",
        "tool -XX:AOTCacheOutput=" + tools + ".aot | aot-training | a config.pbtxt",
        "jperfetto -XX:AOTCacheOutput=" + image + "/lib/jperfetto.aot | demo | --system | -t | 2s | -o | /dev/null"),
        Files.readAllLines(log), out);
    for (Path archive : List.of(image.resolve("lib/jtraced.aot"), Path.of(tools + ".aot"),
        image.resolve("lib/jperfetto.aot"))) {
      assertTrue(Files.isRegularFile(archive), archive + ": " + out);
      assertTrue(out.contains("train-cds: " + archive + " ("), out);
    }
    assertFalse(out.contains("WARNING"), out);
  }

  @Test
  void aFailedClientLeavesNoArchiveAndTheOthersStillTrain() throws Exception {
    String out = train("failing", "x", "--", "jperfetto", "--version");
    assertTrue(out.contains("WARNING: " + image + "/bin/failing x failed"), out);
    assertFalse(Files.exists(image.resolve("lib/failing.aot")), out);
    assertTrue(Files.isRegularFile(image.resolve("lib/jperfetto.aot")), out);
    assertTrue(Files.isRegularFile(image.resolve("lib/jtraced.aot")), out);
  }
}
