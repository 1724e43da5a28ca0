package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.service.ipc.ServiceHost;

/**
 * What the jvm.jfr ITs run against: a jtraced on sockets in a temp dir, this JVM's producer with
 * jvm.jfr registered and connected, and a consumer.
 */
final class JfrServiceFixture implements AutoCloseable {
  final String producerSocket;
  final ServiceHost host;
  final TracingProducer producer;
  final DataSource<?> ds;
  final TracingConsumer consumer;

  private JfrServiceFixture(Path dir, String producerName) throws Exception {
    producerSocket = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    host = ServiceHost.start(ServiceHost.Options.of(producerSocket, c));
    producer = TracingProducer.builder(producerName).socketPath(producerSocket).start();
    ds = JfrDataSource.register(producer);
    assertTrue(producer.awaitConnected(Duration.ofSeconds(10)));
    consumer = TracingConsumer.connect(c);
  }

  /** Starts the service in dir and connects a producer called producerName and a consumer. */
  static JfrServiceFixture start(Path dir, String producerName) throws Exception {
    return new JfrServiceFixture(dir, producerName);
  }

  @Override
  public void close() {
    consumer.close();
    producer.close();
    host.close();
  }
}
