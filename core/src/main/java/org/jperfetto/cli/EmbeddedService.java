package org.jperfetto.cli;

import java.io.IOException;

/**
 * An in-process tracing service that jperfetto starts when no service answers on the consumer
 * socket (like upstream's tracebox). Found through {@link Factory} implementations.
 */
public interface EmbeddedService extends AutoCloseable {
  /** The socket its ConsumerPort listens on. */
  String consumerSocket();

  /** The socket its ProducerPort listens on (where producers of other processes connect). */
  String producerSocket();

  /** Stops the service and removes its sockets. */
  @Override
  void close();

  /** Starts embedded services; provided by the service side of jperfetto. */
  interface Factory {
    /**
     * Starts a service.
     *
     * @param consumerSocket the consumer socket nobody answered on (the service may listen there)
     */
    EmbeddedService start(String consumerSocket) throws IOException;
  }
}
