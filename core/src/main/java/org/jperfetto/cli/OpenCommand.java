package org.jperfetto.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code jperfetto open TRACE}: shows a trace file in the Perfetto UI without uploading it. The
 * file is served once from 127.0.0.1 (port 9001, the one origin ui.perfetto.dev's content policy
 * lets it fetch a trace from on this machine), with the cross-origin header the UI needs; the
 * browser is pointed at the UI with the file's URL. The command ends once the UI has fetched the
 * file, or after {@link #WAIT_SECONDS} without a fetch.
 */
public final class OpenCommand implements Subcommand {
  static final String NAME = "open";
  /** The UI, and the only origin the served file is shared with. */
  static final String UI_ORIGIN = "https://ui.perfetto.dev";
  /** The port the UI may fetch from (its content security policy names 127.0.0.1:9001). */
  static final int UI_PORT = 9001;
  static final int WAIT_SECONDS = 300;
  private static final String USAGE = "usage: jperfetto open [--no-browser] [--port N] TRACE";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "show a trace file in ui.perfetto.dev, served once from this machine: open [--no-browser] TRACE";
  }

  @Override
  public int run(String[] args, CliContext ctx) throws IOException, InterruptedException {
    Path file = null;
    boolean browser = true;
    int port = UI_PORT;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--no-browser" -> browser = false;
        case "--port" -> {
          if (i + 1 == args.length) {
            ctx.err().println(USAGE);
            return Jperfetto.EXIT_ERROR;
          }
          port = Integer.parseInt(args[++i]);
        }
        default -> {
          if (file != null || args[i].startsWith("-")) {
            ctx.err().println(USAGE);
            return Jperfetto.EXIT_ERROR;
          }
          file = Path.of(args[i]);
        }
      }
    }
    if (file == null) {
      ctx.err().println(USAGE);
      return Jperfetto.EXIT_ERROR;
    }
    if (!Files.isRegularFile(file)) {
      ctx.err().println("jperfetto open: no such trace file: " + file);
      return Jperfetto.EXIT_ERROR;
    }
    return serveOnce(file, port, browser, ctx);
  }

  /** Serves file until one GET of it completed (or the wait ran out); returns the exit code. */
  static int serveOnce(Path file, int port, boolean browser, CliContext ctx) throws IOException, InterruptedException {
    String name = URLEncoder.encode(file.getFileName().toString(), StandardCharsets.UTF_8).replace("+", "%20");
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    } catch (IOException e) {
      ctx.err().println("jperfetto open: cannot serve on 127.0.0.1:" + port + " (" + e.getMessage()
          + "); is another 'open' running?");
      return Jperfetto.EXIT_ERROR;
    }
    CountDownLatch fetched = new CountDownLatch(1);
    server.createContext("/", exchange -> {
      try (exchange) {
        answer(exchange, file, "/" + name, fetched);
      }
    });
    server.start();
    try {
      String fileUrl = "http://127.0.0.1:" + server.getAddress().getPort() + "/" + name;
      String uiUrl = UI_ORIGIN + "/#!/?url=" + fileUrl;
      ctx.err().println("Serving " + file + " (" + Files.size(file) + " bytes) once at " + fileUrl);
      ctx.out().println(uiUrl);
      if (browser && !startBrowser(uiUrl)) {
        ctx.err().println("No browser could be started here (xdg-open); open the URL above in one.");
      }
      if (!fetched.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        ctx.err().println("jperfetto open: the UI did not fetch the trace within " + WAIT_SECONDS + " s");
        return Jperfetto.EXIT_ERROR;
      }
      ctx.err().println("The UI has the trace.");
      return Jperfetto.EXIT_OK;
    } finally {
      server.stop(0);
    }
  }

  private static void answer(HttpExchange exchange, Path file, String path, CountDownLatch fetched)
      throws IOException {
    var headers = exchange.getResponseHeaders();
    headers.set("Access-Control-Allow-Origin", UI_ORIGIN);
    headers.set("Cache-Control", "no-cache");
    String method = exchange.getRequestMethod();
    if (method.equals("OPTIONS")) {
      headers.set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
      headers.set("Access-Control-Allow-Headers", "*");
      exchange.sendResponseHeaders(204, -1);
      return;
    }
    if (!exchange.getRequestURI().getRawPath().equals(path) || !(method.equals("GET") || method.equals("HEAD"))) {
      exchange.sendResponseHeaders(404, -1);
      return;
    }
    headers.set("Content-Type", "application/octet-stream");
    long size = Files.size(file);
    if (method.equals("HEAD")) {
      headers.set("Content-Length", Long.toString(size));
      exchange.sendResponseHeaders(200, -1);
      return;
    }
    exchange.sendResponseHeaders(200, size);
    try (OutputStream body = exchange.getResponseBody()) {
      Files.copy(file, body);
    }
    fetched.countDown();
  }

  /** Asks the desktop to open url (xdg-open); false if there is none to ask. */
  private static boolean startBrowser(String url) {
    try {
      Process p = new ProcessBuilder("xdg-open", url).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return !p.waitFor(2, TimeUnit.SECONDS) || p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
