package org.jperfetto.ipc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Upstream's rule for where the tracing service's sockets are, the one place producers, consumers
 * and the service get it from: the environment variable whenever it is set (even to an empty
 * string, as upstream's getenv check), else under /run/perfetto/ when that directory can be
 * searched, else in /tmp. The producer variable may name several sockets, comma-separated, for
 * the service to listen on ({@link #split}).
 */
public final class DefaultSockets {
  public static final String PRODUCER_ENV = "PERFETTO_PRODUCER_SOCK_NAME";
  public static final String CONSUMER_ENV = "PERFETTO_CONSUMER_SOCK_NAME";
  public static final String RUN_DIR = "/run/perfetto/";
  public static final String RUN_PRODUCER = "/run/perfetto/traced-producer.sock";
  public static final String RUN_CONSUMER = "/run/perfetto/traced-consumer.sock";
  public static final String TMP_PRODUCER = "/tmp/perfetto-producer";
  public static final String TMP_CONSUMER = "/tmp/perfetto-consumer";

  private DefaultSockets() {}

  /** The producer socket(s) for this process's environment. */
  public static String producer() {
    return producer(System.getenv(), Path.of(RUN_DIR));
  }

  /** The consumer socket for this process's environment. */
  public static String consumer() {
    return consumer(System.getenv(), Path.of(RUN_DIR));
  }

  /** The producer socket(s) given env and the run directory to probe. */
  public static String producer(Map<String, String> env, Path runDir) {
    String v = env.get(PRODUCER_ENV);
    return v != null ? v : runDirUsable(runDir) ? RUN_PRODUCER : TMP_PRODUCER;
  }

  /** The consumer socket given env and the run directory to probe. */
  public static String consumer(Map<String, String> env, Path runDir) {
    String v = env.get(CONSUMER_ENV);
    return v != null ? v : runDirUsable(runDir) ? RUN_CONSUMER : TMP_CONSUMER;
  }

  /** Whether runDir exists and can be searched (upstream: access(X_OK) on /run/perfetto/). */
  static boolean runDirUsable(Path runDir) {
    return Files.isDirectory(runDir) && Files.isExecutable(runDir);
  }

  /** Splits a comma-separated socket list (the service's producer sockets); empty entries are dropped. */
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
