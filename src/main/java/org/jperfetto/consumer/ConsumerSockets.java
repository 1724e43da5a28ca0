package org.jperfetto.consumer;

import java.nio.file.Path;
import java.util.Map;
import org.jperfetto.ipc.DefaultSockets;

/**
 * Where the tracing service's consumer socket is, by upstream's rules: the environment variable
 * {@code PERFETTO_CONSUMER_SOCK_NAME} if set; else {@code /run/perfetto/traced-consumer.sock} when
 * the directory {@code /run/perfetto/} is searchable; else {@code /tmp/perfetto-consumer}.
 */
public final class ConsumerSockets {
  /** The environment variable that names the consumer socket. */
  public static final String ENV = DefaultSockets.CONSUMER_ENV;
  /** The directory used when it exists and is searchable. */
  public static final String RUN_DIR = DefaultSockets.RUN_DIR;
  /** The socket inside {@link #RUN_DIR}. */
  public static final String RUN_SOCKET = DefaultSockets.RUN_CONSUMER;
  /** The fallback socket. */
  public static final String TMP_SOCKET = DefaultSockets.TMP_CONSUMER;

  private ConsumerSockets() {}

  /** The consumer socket for this process's environment. */
  public static String defaultPath() {
    return resolve(System.getenv(), Path.of(RUN_DIR));
  }

  /** The consumer socket given {@code env} and the run directory to probe (for tests). */
  static String resolve(Map<String, String> env, Path runDir) {
    return DefaultSockets.consumer(env.get(ENV), runDir);
  }
}
