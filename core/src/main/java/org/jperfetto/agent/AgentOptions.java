package org.jperfetto.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's options: {@code -javaagent:jperfetto-agent.jar=KEY=VALUE,KEY=VALUE...} (the same
 * string follows {@code jperfetto attach PID}). Lists inside a value are separated by {@code +}.
 *
 * <table>
 * <caption>Agent options</caption>
 * <tr><td>{@code name}</td><td>producer name (default {@value #DEFAULT_NAME})</td></tr>
 * <tr><td>{@code socket}</td><td>producer socket (default: $PERFETTO_PRODUCER_SOCK_NAME, else the
 *   system's traced socket)</td></tr>
 * <tr><td>{@code smb}</td><td>shared memory buffer size hint in KiB (default: the service's, 256)</td></tr>
 * <tr><td>{@code jfr}</td><td>the jvm.jfr groups used when a session's config names none, e.g.
 *   {@code gc+locks+threads}; {@code off}: no jvm.jfr data source (default: jvm.jfr's defaults)</td></tr>
 * <tr><td>{@code methods}</td><td>{@link MethodPatterns} whose methods become slices, e.g.
 *   {@code com.example.Service#handle+com.example.db.*}</td></tr>
 * <tr><td>{@code file}</td><td>a file with more options, one {@code KEY=VALUE} a line ({@code #}
 *   starts a comment); a list may continue over several lines of the same key</td></tr>
 * </table>
 */
public record AgentOptions(String name, String socket, int smbKb, boolean jfr, String jfrConfig,
    List<String> methods) {
  public static final String DEFAULT_NAME = "jperfetto.agent";

  public AgentOptions {
    methods = List.copyOf(methods);
  }

  /**
   * Parses an option string (null or blank: the defaults).
   *
   * @throws IllegalArgumentException naming the bad option
   */
  public static AgentOptions parse(String text) {
    Parser p = new Parser();
    if (text != null && !text.isBlank()) {
      for (String token : text.split(",")) {
        p.option(token.strip(), "agent option");
      }
    }
    return p.build();
  }

  private static final class Parser {
    String name = DEFAULT_NAME;
    String socket;
    int smbKb;
    boolean jfr = true;
    String jfrConfig = "";
    final List<String> methods = new ArrayList<>();

    void option(String token, String where) {
      if (token.isEmpty()) {
        return;
      }
      int eq = token.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(where + " \"" + token + "\": expected KEY=VALUE");
      }
      String key = token.substring(0, eq).strip();
      String value = token.substring(eq + 1).strip();
      switch (key) {
        case "name" -> name = nonEmpty(key, value);
        case "socket" -> socket = nonEmpty(key, value);
        case "smb" -> smbKb = kib(value);
        case "jfr" -> {
          jfr = !value.equals("off");
          jfrConfig = jfr ? "groups=" + String.join(",", split(value)) : "";
        }
        case "methods" -> methods.addAll(split(value));
        case "file" -> file(Path.of(nonEmpty(key, value)));
        default -> throw new IllegalArgumentException(where + " \"" + key + "\" unknown; known: name, socket,"
            + " smb, jfr, methods, file");
      }
    }

    void file(Path path) {
      List<String> lines;
      try {
        lines = Files.readAllLines(path);
      } catch (IOException e) {
        throw new IllegalArgumentException("agent option file " + path + ": " + e.getMessage(), e);
      }
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (!line.isEmpty() && !line.startsWith("#")) {
          option(line, path + ":" + (i + 1) + ":");
        }
      }
    }

    AgentOptions build() {
      MethodPatterns.parse(methods); // refuses a malformed pattern now, not at the first class load
      if (jfr && !jfrConfig.isEmpty()) {
        org.jperfetto.producer.jfr.JfrConfig.parse(jfrConfig);
      }
      return new AgentOptions(name, socket, smbKb, jfr, jfrConfig, methods);
    }
  }

  private static List<String> split(String value) {
    List<String> out = new ArrayList<>();
    for (String s : value.split("\\+")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }

  private static String nonEmpty(String key, String value) {
    if (value.isEmpty()) {
      throw new IllegalArgumentException("agent option " + key + " needs a value");
    }
    return value;
  }

  private static int kib(String value) {
    try {
      int kb = Integer.parseInt(value);
      if (kb <= 0 || kb > 32 * 1024) {
        throw new NumberFormatException();
      }
      return kb;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("agent option smb=" + value + ": expected KiB in 1..32768");
    }
  }
}
