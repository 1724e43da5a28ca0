package org.jperfetto.opentelemetry.agent;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * The IT's app, which knows nothing of jperfetto or OpenTelemetry: serves /hello with the JDK's
 * HttpServer and, per "RUN" line on stdin, calls itself {@link #CALLS} times with java.net.http
 * (printing "DONE"); "EXIT" ends it. It prints "READY" once it serves. With protobuf-java on its
 * class path it uses it, as an app with its own protos would, and first prints "PROTOBUF " and the
 * version of the runtime it loaded.
 */
public final class HttpApp {
  /** Requests per RUN. */
  public static final int CALLS = 5;

  private HttpApp() {}

  public static void main(String[] args) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/hello", exchange -> {
      byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hello");
    HttpClient client = HttpClient.newHttpClient();
    printOwnProtobuf();
    System.out.println("READY");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("EXIT"); line = in.readLine()) {
      if (line.equals("RUN")) {
        for (int i = 0; i < CALLS; i++) {
          HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).GET().build(),
              HttpResponse.BodyHandlers.ofString());
          if (r.statusCode() != 200) {
            throw new IllegalStateException("status " + r.statusCode());
          }
        }
        System.out.println("DONE");
      }
    }
    server.stop(0);
    System.exit(0);
  }

  /** Builds a protobuf message with whatever protobuf-java the app's class path holds, if any. */
  private static void printOwnProtobuf() throws Exception {
    Class<?> struct;
    try {
      struct = Class.forName("com.google.protobuf.Value");
    } catch (ClassNotFoundException e) {
      return;
    }
    Object builder = struct.getMethod("newBuilder").invoke(null);
    builder.getClass().getMethod("setStringValue", String.class).invoke(builder, "app");
    Object value = builder.getClass().getMethod("build").invoke(builder);
    byte[] bytes = (byte[]) struct.getMethod("toByteArray").invoke(value);
    Package p = struct.getPackage();
    String version = p.getImplementationVersion();
    if (version == null) {
      version = struct.getProtectionDomain().getCodeSource().getLocation().toString();
    }
    System.out.println("PROTOBUF " + version + " " + bytes.length);
  }
}
