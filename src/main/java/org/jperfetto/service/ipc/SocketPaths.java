package org.jperfetto.service.ipc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where jtraced listens unless told otherwise, as upstream decides it: the environment
 * variables, else /run/perfetto/ when that directory is accessible, else /tmp.
 */
public final class SocketPaths {
  public static final String PRODUCER_ENV = "PERFETTO_PRODUCER_SOCK_NAME";
  public static final String CONSUMER_ENV = "PERFETTO_CONSUMER_SOCK_NAME";
  public static final String RUN_DIR = "/run/perfetto/";
  public static final String RUN_PRODUCER = "/run/perfetto/traced-producer.sock";
  public static final String RUN_CONSUMER = "/run/perfetto/traced-consumer.sock";
  public static final String TMP_PRODUCER = "/tmp/perfetto-producer";
  public static final String TMP_CONSUMER = "/tmp/perfetto-consumer";

  private SocketPaths() {}

  /** The producer socket(s), possibly a comma-separated list. */
  public static String defaultProducer() {
    return producer(System.getenv(), Path.of(RUN_DIR));
  }

  public static String defaultConsumer() {
    return consumer(System.getenv(), Path.of(RUN_DIR));
  }

  static String producer(Map<String, String> env, Path runDir) {
    String name = env.get(PRODUCER_ENV);
    return name != null ? name : useRunDir(runDir) ? RUN_PRODUCER : TMP_PRODUCER;
  }

  static String consumer(Map<String, String> env, Path runDir) {
    String name = env.get(CONSUMER_ENV);
    return name != null ? name : useRunDir(runDir) ? RUN_CONSUMER : TMP_CONSUMER;
  }

  private static boolean useRunDir(Path runDir) {
    return Files.isDirectory(runDir) && Files.isExecutable(runDir);
  }

  /** Splits a comma-separated socket list; empty entries are dropped. */
  public static List<String> split(String names) {
    List<String> out = new ArrayList<>();
    for (String s : names.split(",")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("no socket path in \"" + names + "\"");
    }
    return out;
  }
}
