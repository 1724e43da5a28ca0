package org.jperfetto.tools;

import java.io.PrintStream;
import java.util.Map;
import org.jperfetto.consumer.ConsumerSockets;
import org.jperfetto.producer.ProducerSockets;

/**
 * What a tool runs with: its output streams and environment (the sockets come from it as they do
 * for any producer or consumer: PERFETTO_PRODUCER_SOCK_NAME, PERFETTO_CONSUMER_SOCK_NAME).
 */
record ToolContext(PrintStream out, PrintStream err, Map<String, String> env) {
  static final String PRODUCER_ENV = "PERFETTO_PRODUCER_SOCK_NAME";
  static final String CONSUMER_ENV = "PERFETTO_CONSUMER_SOCK_NAME";

  static ToolContext system() {
    return new ToolContext(System.out, System.err, System.getenv());
  }

  /** The producer socket: the first of the env's comma list, else the system default. */
  String producerSocket() {
    String names = env.get(PRODUCER_ENV);
    String socket = names == null || names.isEmpty() ? ProducerSockets.defaultPath() : names;
    int comma = socket.indexOf(',');
    return comma < 0 ? socket : socket.substring(0, comma);
  }

  /** The consumer socket: the env's, else the system default. */
  String consumerSocket() {
    String socket = env.get(CONSUMER_ENV);
    return socket == null || socket.isEmpty() ? ConsumerSockets.defaultPath() : socket;
  }
}
