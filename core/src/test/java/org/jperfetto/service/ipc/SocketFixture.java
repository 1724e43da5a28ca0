package org.jperfetto.service.ipc;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.consumer.TracingConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A jtraced ({@link ServiceHost}) on sockets in a temp dir for each test, and the socket producers
 * and consumers a test opens (closed after it).
 */
abstract class SocketFixture {
  static final String DS = "test.ds";
  @TempDir Path dir;
  ServiceHost host;
  String producerSocket;
  String consumerSocket;
  final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    producerSocket = dir.resolve("p.sock").toString();
    consumerSocket = dir.resolve("c.sock").toString();
    host = ServiceHost.start(ServiceHost.Options.of(producerSocket, consumerSocket));
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    host.close();
  }

  SocketProducer producer(String name) throws Exception {
    return closeLater(SocketProducer.connect(producerSocket, name, DS));
  }

  TracingConsumer consumer() throws Exception {
    return closeLater(TracingConsumer.connect(consumerSocket));
  }

  <T extends AutoCloseable> T closeLater(T c) {
    toClose.add(c);
    return c;
  }
}
