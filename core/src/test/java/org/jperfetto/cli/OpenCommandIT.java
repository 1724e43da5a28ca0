package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code jperfetto open}: the file served once on loopback, with the headers the Perfetto UI needs. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenCommandIT {
  @TempDir
  Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private CompletableFuture<Integer> open(String... args) {
    CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true),
        new PrintStream(err, true), Map.of(), false);
    return CompletableFuture.supplyAsync(() -> {
      try {
        return new OpenCommand().run(args, ctx);
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
  }

  private String uiUrl() throws InterruptedException {
    for (int i = 0; i < 500; i++) {
      String printed = out.toString(StandardCharsets.UTF_8).trim();
      if (!printed.isEmpty()) {
        return printed;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("no URL printed; stderr: " + err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void servesTheTraceOnceToTheUiOriginAndEnds() throws Exception {
    Path trace = dir.resolve("my trace.pftrace");
    byte[] bytes = new byte[300_000];
    new java.util.Random(7).nextBytes(bytes);
    Files.write(trace, bytes);
    CompletableFuture<Integer> exit = open("--no-browser", "--port", "0", trace.toString());
    String ui = uiUrl();
    String prefix = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:";
    assertTrue(ui.startsWith(prefix) && ui.endsWith("/my%20trace.pftrace"), ui);
    URI file = URI.create(ui.substring(ui.indexOf("url=") + 4));
    HttpURLConnection wrong = (HttpURLConnection) file.resolve("/other").toURL().openConnection();
    assertEquals(404, wrong.getResponseCode());
    wrong.disconnect();
    assertTrue(!exit.isDone(), "a wrong path does not end the command");
    HttpURLConnection got = (HttpURLConnection) file.toURL().openConnection();
    got.setRequestProperty("Origin", "https://ui.perfetto.dev");
    assertEquals(200, got.getResponseCode());
    try (var body = got.getInputStream()) {
      assertArrayEquals(bytes, body.readAllBytes());
    }
    assertEquals("https://ui.perfetto.dev", got.getHeaderField("Access-Control-Allow-Origin"));
    assertEquals("no-cache", got.getHeaderField("Cache-Control"));
    assertEquals(0, exit.get(10, TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("The UI has the trace."));
  }

  @Test
  void aMissingFileIsAnErrorThatSaysSo() throws Exception {
    assertEquals(1, open("--no-browser", dir.resolve("none.pftrace").toString()).get());
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("no such trace file"), err.toString());
  }
}
