package org.jperfetto.producer;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the service's producer socket is, by upstream's rules. */
public final class ProducerSockets {
  /** Overrides the socket path, as for upstream's clients. */
  public static final String ENV_VAR = "PERFETTO_PRODUCER_SOCK_NAME";
  static final String RUN_DIR = "/run/perfetto/";
  static final String RUN_SOCKET = "/run/perfetto/traced-producer.sock";
  static final String TMP_SOCKET = "/tmp/perfetto-producer";

  private ProducerSockets() {}

  /**
   * $PERFETTO_PRODUCER_SOCK_NAME if set and not empty; else /run/perfetto/traced-producer.sock
   * when /run/perfetto/ can be searched; else /tmp/perfetto-producer.
   */
  public static String defaultPath() {
    return resolve(System.getenv(ENV_VAR), Files.isExecutable(Path.of(RUN_DIR)));
  }

  static String resolve(String env, boolean runDirAccessible) {
    if (env != null && !env.isEmpty()) {
      return env;
    }
    return runDirAccessible ? RUN_SOCKET : TMP_SOCKET;
  }
}
