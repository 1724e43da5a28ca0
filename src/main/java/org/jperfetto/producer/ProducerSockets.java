package org.jperfetto.producer;

import java.nio.file.Path;
import org.jperfetto.ipc.DefaultSockets;

/** Where the service's producer socket is, by upstream's rules. */
public final class ProducerSockets {
  /** Overrides the socket path, as for upstream's clients. */
  public static final String ENV_VAR = DefaultSockets.PRODUCER_ENV;
  static final String RUN_DIR = DefaultSockets.RUN_DIR;
  static final String RUN_SOCKET = DefaultSockets.RUN_PRODUCER;
  static final String TMP_SOCKET = DefaultSockets.TMP_PRODUCER;

  private ProducerSockets() {}

  /**
   * $PERFETTO_PRODUCER_SOCK_NAME if set and not empty; else /run/perfetto/traced-producer.sock
   * when /run/perfetto/ can be searched; else /tmp/perfetto-producer.
   */
  public static String defaultPath() {
    return resolve(System.getenv(ENV_VAR), DefaultSockets.runDirUsable(Path.of(RUN_DIR)));
  }

  static String resolve(String env, boolean runDirAccessible) {
    if (env != null && !env.isEmpty()) {
      return env;
    }
    return runDirAccessible ? RUN_SOCKET : TMP_SOCKET;
  }
}
