package org.jperfetto.consumer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where the tracing service's consumer socket is, by upstream's rules: the environment variable
 * {@code PERFETTO_CONSUMER_SOCK_NAME} if set; else {@code /run/perfetto/traced-consumer.sock} when
 * the directory {@code /run/perfetto/} is searchable; else {@code /tmp/perfetto-consumer}.
 */
public final class ConsumerSockets {
  /** The environment variable that names the consumer socket. */
  public static final String ENV = "PERFETTO_CONSUMER_SOCK_NAME";
  /** The directory used when it exists and is searchable. */
  public static final String RUN_DIR = "/run/perfetto/";
  /** The socket inside {@link #RUN_DIR}. */
  public static final String RUN_SOCKET = "/run/perfetto/traced-consumer.sock";
  /** The fallback socket. */
  public static final String TMP_SOCKET = "/tmp/perfetto-consumer";

  private ConsumerSockets() {}

  /** The consumer socket for this process's environment. */
  public static String defaultPath() {
    return resolve(System.getenv(), Path.of(RUN_DIR));
  }

  /** The consumer socket given {@code env} and the run directory to probe (for tests). */
  static String resolve(Map<String, String> env, Path runDir) {
    String name = env.get(ENV);
    if (name != null) {
      return name;
    }
    return Files.isDirectory(runDir) && Files.isExecutable(runDir) ? RUN_SOCKET : TMP_SOCKET;
  }
}
