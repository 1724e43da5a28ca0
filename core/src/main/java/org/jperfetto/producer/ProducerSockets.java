package org.jperfetto.producer;

import org.jperfetto.ipc.DefaultSockets;

/** Where the service's producer socket is, by upstream's rules. */
public final class ProducerSockets {
  private ProducerSockets() {}

  /**
   * $PERFETTO_PRODUCER_SOCK_NAME if set (even if empty, as upstream); else
   * /run/perfetto/traced-producer.sock when /run/perfetto/ can be searched; else
   * /tmp/perfetto-producer.
   */
  public static String defaultPath() {
    return DefaultSockets.producer();
  }
}
