package org.jperfetto.ipc;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Upstream's rule for where the tracing service's sockets are, in one place for producers,
 * consumers and the service: the environment variable when it is set, else under /run/perfetto/
 * when that directory can be searched, else in /tmp.
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

  /** Whether runDir exists and can be searched (upstream: access(X_OK) on /run/perfetto/). */
  public static boolean runDirUsable(Path runDir) {
    return Files.isDirectory(runDir) && Files.isExecutable(runDir);
  }

  /** envValue when not null, else the producer socket under runDir or /tmp. */
  public static String producer(String envValue, Path runDir) {
    return envValue != null ? envValue : runDirUsable(runDir) ? RUN_PRODUCER : TMP_PRODUCER;
  }

  /** envValue when not null, else the consumer socket under runDir or /tmp. */
  public static String consumer(String envValue, Path runDir) {
    return envValue != null ? envValue : runDirUsable(runDir) ? RUN_CONSUMER : TMP_CONSUMER;
  }
}
