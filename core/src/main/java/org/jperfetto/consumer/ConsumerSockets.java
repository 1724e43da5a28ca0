package org.jperfetto.consumer;

import org.jperfetto.ipc.DefaultSockets;

/**
 * Where the tracing service's consumer socket is, by upstream's rules: the environment variable
 * {@code PERFETTO_CONSUMER_SOCK_NAME} if set; else {@code /run/perfetto/traced-consumer.sock} when
 * the directory {@code /run/perfetto/} is searchable; else {@code /tmp/perfetto-consumer}.
 */
public final class ConsumerSockets {
  private ConsumerSockets() {}

  /** The consumer socket for this process's environment. */
  public static String defaultPath() {
    return DefaultSockets.consumer();
  }
}
